//! The rayon pool every parallel kernel runs on. Its size comes from `MDF_NUM_THREADS`
//! (read once, at the first parallel call) so a process can pin kernel parallelism without
//! touching rayon's global pool, which other libraries in the same process may own.
//!
//! With one kernel thread (one core, or `MDF_NUM_THREADS=1`) there is no shared pool: each calling
//! thread runs its kernels itself, in a one-thread pool of its own whose thread is the caller
//! (rayon's `use_current_thread`). A shared pool of one thread made every call a handoff: the
//! caller slept while the pool's thread worked, then the pool's thread spun idle on the core the
//! caller needed. Measured with the fastText pipeline of `benchmarks/bench_fasttext.py` (800 K
//! texts, one worker on one core, three interleaved rounds of both behind a switch): the operator
//! took 5.61-5.78 s through the shared pool, 5.07-5.33 s on the caller. With two workers, each
//! caller runs its own calls at once, where the shared pool of one thread took them in turn.
//! Rayon leaks a caller pool's registry when its thread ends: 7.8 KB of memory a thread that ever
//! called a kernel (measured over 6,000 threads).

use std::sync::OnceLock;

use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::error::{KResult, KernelError};

pub const ENV_VAR: &str = "MDF_NUM_THREADS";

/// The shared pool; `None` when kernels run on their callers (one kernel thread).
static POOL: OnceLock<Result<Option<ThreadPool>, String>> = OnceLock::new();

thread_local! {
    /// The calling thread as a pool of one (used when `POOL` is `None`); `None` when the thread is
    /// already a worker of another rayon pool (another library's), which rayon refuses to share.
    static CALLER: Option<ThreadPool> = ThreadPoolBuilder::new()
        .num_threads(1)
        .use_current_thread()
        .build()
        .ok();
}

/// A shared pool of one thread, for callers that cannot be a pool of their own.
static FALLBACK: OnceLock<Result<ThreadPool, String>> = OnceLock::new();

/// Parse a `MDF_NUM_THREADS` value; `None`/empty means "all cores".
pub fn parse_num_threads(value: Option<&str>) -> Result<usize, String> {
    let default = || std::thread::available_parallelism().map_or(1, |n| n.get());
    match value.map(str::trim) {
        None | Some("") => Ok(default()),
        Some(v) => match v.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "{ENV_VAR} must be a positive integer, got {v:?}; unset it to use all cores"
            )),
        },
    }
}

fn build() -> Result<Option<ThreadPool>, String> {
    let env = std::env::var(ENV_VAR).ok();
    let n = parse_num_threads(env.as_deref())?;
    if n == 1 {
        return Ok(None);
    }
    ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(|i| format!("mdf-kernels-{i}"))
        .build()
        .map(Some)
        .map_err(|e| format!("cannot start {n} kernel threads: {e}"))
}

/// The shared pool, built on first use; `None`: kernels run on their callers.
fn pool() -> KResult<Option<&'static ThreadPool>> {
    POOL.get_or_init(build)
        .as_ref()
        .map(Option::as_ref)
        .map_err(|e| KernelError::value(e.clone()))
}

/// Run `f` inside the kernel pool so its rayon iterators use that pool's threads (with one kernel
/// thread: on the calling thread).
pub fn install<T: Send>(f: impl FnOnce() -> KResult<T> + Send) -> KResult<T> {
    match pool()? {
        Some(shared) => shared.install(f),
        None => on_caller(f),
    }
}

/// Run `f` on the calling thread, in its own pool of one; on a shared pool of one thread when the
/// caller is another rayon pool's worker.
fn on_caller<T: Send>(f: impl FnOnce() -> KResult<T> + Send) -> KResult<T> {
    CALLER.with(|caller| match caller {
        Some(own) => own.install(f),
        None => FALLBACK
            .get_or_init(|| {
                ThreadPoolBuilder::new()
                    .num_threads(1)
                    .thread_name(|_| "mdf-kernels-0".into())
                    .build()
                    .map_err(|e| format!("cannot start a kernel thread: {e}"))
            })
            .as_ref()
            .map_err(|e| KernelError::value(e.clone()))?
            .install(f),
    })
}

/// Number of threads of the kernel pool (1: kernels run on their callers).
pub fn num_threads() -> KResult<usize> {
    Ok(pool()?.map_or(1, ThreadPool::current_num_threads))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_env_values() {
        assert_eq!(parse_num_threads(Some("3")), Ok(3));
        assert_eq!(parse_num_threads(Some(" 2 ")), Ok(2));
        assert!(parse_num_threads(None).unwrap() >= 1);
        assert!(parse_num_threads(Some("")).unwrap() >= 1);
        assert!(parse_num_threads(Some("0")).is_err());
        assert!(parse_num_threads(Some("many")).is_err());
    }

    #[test]
    fn install_runs_closure() {
        assert_eq!(install(|| Ok(41 + 1)), Ok(42));
        assert!(num_threads().unwrap() >= 1);
    }

    /// A caller that is already a worker of another rayon pool (another library's) cannot be a
    /// pool of its own: its kernels still run, on the shared pool of one thread. Seen red with the
    /// caller pool's build error returned instead (every call from such a thread failed).
    #[test]
    fn a_caller_inside_another_rayon_pool_still_runs_its_kernels() {
        use rayon::prelude::*;
        let other = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let sum = other.install(|| on_caller(|| Ok((0..1000u64).into_par_iter().sum::<u64>())));
        assert_eq!(sum, Ok(499_500));
    }

    /// The one-thread case: a caller's own pool runs a parallel iterator (rayon's joins) on the
    /// caller itself, also from several threads at once. Seen red without `use_current_thread`
    /// (the pool's own thread ran the work).
    #[test]
    fn a_caller_pool_runs_parallel_work_on_its_caller() {
        use rayon::prelude::*;
        let handles: Vec<_> = (0..3)
            .map(|_| {
                std::thread::spawn(|| {
                    let me = std::thread::current().id();
                    CALLER.with(|caller| {
                        let own = caller.as_ref().expect("a caller pool");
                        own.install(|| {
                            let threads: Vec<_> = (0..10_000)
                                .into_par_iter()
                                .with_max_len(16)
                                .map(|_| std::thread::current().id())
                                .collect();
                            assert!(threads.iter().all(|t| *t == me));
                            (0..100_000u64).into_par_iter().sum::<u64>()
                        })
                    })
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), 4_999_950_000);
        }
    }
}
