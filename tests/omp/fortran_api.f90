! tests/omp/fortran_api.f90 — the Fortran OpenMP API (omp_lib) and the
! constructs gfortran lowers to the same GOMP entry points as C: parallel
! regions, a worksharing loop with a reduction, critical, single,
! locks (simple and nested), the schedule ICV, and tasks with depend.
! Deterministic: the suite compares the output with libgomp's.
program fortran_api
  use omp_lib
  implicit none
  integer, parameter :: n = 1000
  integer :: i, nthreads, counted, tid, level_seen, chunk
  integer(omp_sched_kind) :: kind
  integer(omp_lock_kind) :: lck
  integer(omp_nest_lock_kind) :: nlck
  integer(8) :: total, locked, nested
  integer(8) :: a(0:7)
  logical :: in_par, was_final
  double precision :: t0, t1

  t0 = omp_get_wtime()
  print '(a,l1,a,i0,a,i0)', 'outside: in_parallel=', omp_in_parallel(), ' level=', omp_get_level(), &
       ' thread=', omp_get_thread_num()
  call omp_set_schedule(omp_sched_dynamic, 7)
  call omp_get_schedule(kind, chunk)
  print '(a,i0,a,i0)', 'schedule: kind=', kind, ' chunk=', chunk
  print '(a,l1)', 'dynamic: ', omp_get_dynamic()

  total = 0
  counted = 0
  nthreads = 0
  level_seen = 0
  in_par = .false.
  call omp_init_lock(lck)
  call omp_init_nest_lock(nlck)
  locked = 0
  nested = 0
  !$omp parallel private(tid) reduction(+:counted)
  tid = omp_get_thread_num()
  counted = counted + 1
  !$omp single
  nthreads = omp_get_num_threads()
  level_seen = omp_get_level()
  in_par = omp_in_parallel()
  !$omp end single
  !$omp do reduction(+:total) schedule(runtime)
  do i = 1, n
     total = total + i
  end do
  !$omp end do
  call omp_set_lock(lck)
  locked = locked + tid + 1
  call omp_unset_lock(lck)
  call omp_set_nest_lock(nlck)
  call omp_set_nest_lock(nlck)
  nested = nested + 1
  call omp_unset_nest_lock(nlck)
  call omp_unset_nest_lock(nlck)
  !$omp end parallel
  call omp_destroy_lock(lck)
  call omp_destroy_nest_lock(nlck)
  print '(a,l1,a,i0,a,l1)', 'in region: threads match=', nthreads == omp_get_max_threads(), ' level=', &
       level_seen, ' in_parallel=', in_par
  print '(a,l1)', 'every thread counted: ', counted == nthreads
  print '(a,i0)', 'do reduction: ', total
  print '(a,l1,a,l1)', 'simple lock sum: ', locked == int(nthreads, 8) * (nthreads + 1) / 2, &
       ', nested lock count: ', nested == nthreads

  ! A chain of tasks through depend: a(k) = a(k-1) + k.
  a = 0
  was_final = .true.
  !$omp parallel
  !$omp single
  do i = 1, 7
     !$omp task depend(in: a(i-1)) depend(out: a(i)) firstprivate(i) shared(a)
     a(i) = a(i-1) + i
     !$omp end task
  end do
  !$omp task shared(was_final)
  was_final = omp_in_final()
  !$omp end task
  !$omp taskwait
  !$omp end single
  !$omp end parallel
  print '(a,8(1x,i0))', 'task chain:', a
  print '(a,l1)', 'in_final in a task: ', was_final

  t1 = omp_get_wtime()
  print '(a,l1,a,l1)', 'wtime moves: ', t1 >= t0, ', wtick positive: ', omp_get_wtick() > 0
  print '(a,l1,a,i0,a,i0)', 'device: initial=', omp_is_initial_device(), ' devices=', omp_get_num_devices(), &
       ' teams=', omp_get_num_teams()
end program fortran_api
