! tests/omp/fortran_constructs.f90 — OpenMP constructs as gfortran lowers them:
! parallel workshare over array expressions and intrinsics (sum, maxval),
! an array reduction, tasks with depend, a collapsed guided loop and
! parallel sections with a reduction. Compared with libgomp's output
! (run_suite.sh).
program ftest
  use omp_lib
  implicit none
  integer, parameter :: n = 10000
  real(8) :: a(n), b(n), c(n), s, m
  integer :: i, cnt, x, y
  integer :: hist(8)
  do i = 1, n
    a(i) = i; b(i) = 2*i
  end do
  !$omp parallel workshare
  c = a + b
  s = sum(c)
  m = maxval(c)
  !$omp end parallel workshare
  print '(a, f16.1, f10.1)', 'workshare ', s, m
  hist = 0
  !$omp parallel do reduction(+:hist)
  do i = 1, n
    hist(mod(i, 8) + 1) = hist(mod(i, 8) + 1) + 1
  end do
  !$omp end parallel do
  print '(a, 8i6)', 'array reduction ', hist
  x = 1; y = 0
  !$omp parallel
  !$omp single
  !$omp task depend(out: x)
  x = 41
  !$omp end task
  !$omp task depend(inout: x)
  x = x + 1
  !$omp end task
  !$omp task depend(in: x) depend(out: y)
  y = x * 2
  !$omp end task
  !$omp end single
  !$omp end parallel
  print '(a, 2i6)', 'fortran depend ', x, y
  cnt = 0
  !$omp parallel do schedule(guided) reduction(+:cnt) collapse(2)
  do i = 1, 100
    do x = 1, 50
      cnt = cnt + i*x
    end do
  end do
  print '(a, i12)', 'collapse guided ', cnt
  !$omp parallel sections reduction(+:cnt)
  !$omp section
  cnt = cnt + 1
  !$omp section
  cnt = cnt + 2
  !$omp end parallel sections
  print '(a, i12)', 'sections ', cnt
end program
