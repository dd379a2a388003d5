use std::process::ExitCode;

fn main() -> ExitCode {
    touchmove::cli::main()
}
