! tests/omp/fortran_api.f90 — the Fortran OpenMP API (omp_lib) and the
! constructs gfortran lowers to the same GOMP entry points as C: parallel
! regions, a worksharing loop with a reduction, critical, single,
! locks (simple and nested), the schedule ICV, and tasks with depend.
! Deterministic: the suite compares the output with libgomp's.
program fortran_api
  use omp_lib
  use, intrinsic :: iso_c_binding, only: c_ptr, c_associated, c_size_t
  implicit none
  integer, parameter :: n = 1000
  integer :: i, nthreads, counted, tid, level_seen, chunk
  integer(omp_sched_kind) :: kind
  integer(omp_lock_kind) :: lck
  integer(omp_nest_lock_kind) :: nlck
  integer(8) :: total, locked, nested
  integer(8) :: a(0:7)
  logical :: in_par, was_final, place_ok
  double precision :: t0, t1
  integer :: nplaces, p, nprocs, fmt_len, cap_len
  integer, allocatable :: ids(:)
  character(len=64) :: fmt_buf, cap_buf
  character(len=8) :: tid_text
  integer(omp_allocator_handle_kind) :: al
  type(omp_alloctrait) :: traits(1)
  type(c_ptr) :: blk

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

  ! Places: every place has CPUs; a thread's place number is in range.
  nplaces = omp_get_num_places()
  place_ok = nplaces >= 0
  do p = 0, nplaces - 1
     nprocs = omp_get_place_num_procs(p)
     place_ok = place_ok .and. nprocs > 0
     allocate(ids(nprocs))
     call omp_get_place_proc_ids(p, ids)
     place_ok = place_ok .and. all(ids >= 0)
     deallocate(ids)
  end do
  place_ok = place_ok .and. omp_get_place_num() >= -1 .and. omp_get_place_num() < max(nplaces, 1)
  print '(a,l1)', 'places consistent: ', place_ok

  ! The affinity format through CHARACTER arguments.
  call omp_set_affinity_format('n=%n of %N')
  fmt_len = omp_get_affinity_format(fmt_buf)
  print '(a,a,a,i0)', 'format: ', trim(fmt_buf), ' length ', fmt_len
  !$omp parallel num_threads(2) private(cap_len, cap_buf, tid_text)
  cap_len = omp_capture_affinity(cap_buf, '%n')
  write (tid_text, '(i0)') omp_get_thread_num()
  !$omp critical
  if (trim(cap_buf) /= trim(tid_text) .or. cap_len /= len_trim(tid_text)) print '(a)', 'capture differs'
  !$omp end critical
  !$omp end parallel

  ! An allocator with an alignment trait; omp_alloc is bind(c).
  traits(1) = omp_alloctrait(omp_atk_alignment, 64)
  al = omp_init_allocator(omp_default_mem_space, 1, traits)
  blk = omp_alloc(1000_c_size_t, al)
  print '(a,l1)', 'allocator block: ', c_associated(blk)
  call omp_free(blk, al)
  call omp_destroy_allocator(al)
end program fortran_api
