//! The binding a verified client certificate names. rustls has checked the chain to the result CA
//! and the certificate's validity before this runs; here only its one URI SAN is read.

use ptah_resultdelivery::{BindingError, ResultBinding};
use x509_parser::{extensions::GeneralName, prelude::FromDer as _};

/// Why a client certificate names no binding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    /// Not an X.509 certificate.
    #[error("the client certificate does not parse")]
    Certificate,
    /// It has no SAN, or something besides exactly one URI.
    #[error("the client certificate must name exactly one URI and nothing else")]
    Names,
    /// The URI is not a binding.
    #[error(transparent)]
    Binding(#[from] BindingError),
}

/// The binding of a client certificate (DER).
pub fn binding_of(cert: &[u8]) -> Result<ResultBinding, IdentityError> {
    let (_, cert) =
        x509_parser::certificate::X509Certificate::from_der(cert).map_err(|_| IdentityError::Certificate)?;
    let san = cert
        .subject_alternative_name()
        .map_err(|_| IdentityError::Names)?
        .ok_or(IdentityError::Names)?;
    match san.value.general_names.as_slice() {
        [GeneralName::URI(uri)] => Ok(ResultBinding::from_uri(uri)?),
        _ => Err(IdentityError::Names),
    }
}
