/// Logs a start-up error and ends the process with exit code 78 (EX_CONFIG).
pub fn fatal(message: &str) -> ! {
    eprintln!("jobs: {message}");
    std::process::exit(78)
}
