//! Errors of the SOAP nodes and the WSDL loader.

/// What can go wrong loading a WSDL or handling a SOAP message.
#[derive(Debug, thiserror::Error)]
pub enum WsdlError {
    /// A WSDL or XSD file (the WSDL itself or one it imports) could not be read.
    #[error("{file}: cannot read the file: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// A WSDL or XSD file is not well-formed, or uses something the loader does not support.
    #[error("{file}:{line}: {message}")]
    Invalid {
        file: String,
        line: u32,
        message: String,
    },
}

impl WsdlError {
    pub(crate) fn at(file: &str, line: u32, message: impl Into<String>) -> WsdlError {
        WsdlError::Invalid {
            file: file.to_string(),
            line,
            message: message.into(),
        }
    }
}
