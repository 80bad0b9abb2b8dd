//! The proxy's own TLS: a certificate authority and a serving certificate for 127.0.0.1 and
//! `localhost`, made at each start and kept in memory. A client-go controller sends its
//! credentials only over TLS (clientcmd reads a kubeconfig's user for an `https://` server
//! only), so the proxy speaks TLS to it and hands its authority to the controller's kubeconfig
//! (PROXY-1). ALPN offers HTTP/2 and HTTP/1.1, as the API server does.

use crate::Error;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use std::sync::Arc;

/// The proxy's authority (PEM for kubeconfigs, DER for rustls clients) and its server
/// configuration.
pub struct Identity {
    pub authority_pem: String,
    pub authority_der: Vec<u8>,
    pub server: Arc<rustls::ServerConfig>,
}

/// A fresh authority and serving certificate.
pub fn identity() -> Result<Identity, Error> {
    let err = |e: rcgen::Error| Error::new(format!("the proxy's certificate: {e}"));
    let ca_key = KeyPair::generate().map_err(err)?;
    let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "taintcheck proxy authority");
    let ca = ca.self_signed(&ca_key).map_err(err)?;
    let key = KeyPair::generate().map_err(err)?;
    let mut leaf = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .map_err(err)?;
    leaf.distinguished_name
        .push(DnType::CommonName, "taintcheck proxy");
    let leaf = leaf.signed_by(&key, &ca, &ca_key).map_err(err)?;
    let private = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der())
        .map_err(|e| Error::new(format!("the proxy's key: {e}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::new(format!("TLS: {e}")))?
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone(), ca.der().clone()], private)
        .map_err(|e| Error::new(format!("TLS: {e}")))?;
    server.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Identity {
        authority_pem: ca.pem(),
        authority_der: ca.der().to_vec(),
        server: Arc::new(server),
    })
}
