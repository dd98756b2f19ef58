//! A [`MessageTap`] sees every JSON-RPC message of a connection both ways; [`Tapped`] puts one
//! in front of any rmcp transport. The connection wraps each transport it tries before the
//! handshake (`Connection::set_tap`), so the tap sees the era probe (`server/discover`),
//! `initialize` and everything rmcp's service sends and receives afterwards, in either era.
//! A Try-it session (`crate::session`) keeps its protocol trace with one; a test has none.

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;

/// Sees every message of a connection: [`MessageTap::sent`] when a message is handed to the
/// transport, [`MessageTap::received`] when one comes out of it. Called on the connection's
/// own tasks: keep it quick.
pub trait MessageTap: Send + Sync + 'static {
    fn sent(&self, message: &ClientJsonRpcMessage);
    fn received(&self, message: &ServerJsonRpcMessage);
}

/// A transport whose messages a [`MessageTap`] sees (none: the transport as it is).
pub struct Tapped<T> {
    inner: T,
    tap: Option<Arc<dyn MessageTap>>,
}

impl<T> Tapped<T> {
    pub fn new(inner: T, tap: Option<Arc<dyn MessageTap>>) -> Tapped<T> {
        Tapped { inner, tap }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Tapped<T> {
    type Error = T::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let Some(tap) = &self.tap {
            tap.sent(&item);
        }
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        let tap = self.tap.clone();
        let received = self.inner.receive();
        async move {
            let message = received.await;
            if let (Some(tap), Some(message)) = (&tap, &message) {
                tap.received(message);
            }
            message
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
