// mimalloc: detect on a 5,000-operation AIR spent two thirds of its time in glibc's malloc
// and free (fastbin consolidation); the rails and the router allocate the same way.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    anvil_bench::cli::main()
}
