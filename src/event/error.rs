//! An event or pairings file that could not be used: the file, the line and the field.

use std::path::PathBuf;

/// A configuration file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file has a syntax error, an unknown field or a bad value (also used for pairings
    /// files, where the field is a tag or a column).
    #[error("{path}:{line}: {field}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line of the offending text.
        line: usize,
        /// The field concerned.
        field: String,
        /// What is wrong and how to fix it.
        message: String,
    },
}
