//! Headers that may change while a connection is open (a remote server's headers helper mints
//! short-lived tokens): the connection asks its [`HeaderSource`] before each request, and once
//! more after a refusal of headers it got before the request was sent. The connection knows
//! only this trait; what runs the helper implements it.

use std::time::Instant;

use futures::future::BoxFuture;

use crate::secrets::Sensitive;

/// Header names and values, secrets among them.
pub type Headers = Vec<(String, Sensitive<String>)>;

/// Where an open connection gets the headers of its next request.
pub trait HeaderSource: Send + Sync + std::fmt::Debug {
    /// The headers to send now.
    fn current(&self) -> BoxFuture<'_, Result<Headers, String>>;
    /// After a refusal: forget the headers if they were got before `since`, so that
    /// [`HeaderSource::current`] gets new ones. Whether it did (then the request is worth
    /// sending again).
    fn expire_if_got_before(&self, since: Instant) -> bool;
}
