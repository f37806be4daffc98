fn main() -> std::process::ExitCode {
    anvil_bench::cli::main()
}
