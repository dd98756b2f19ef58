//! What a connection can be given besides its transport: the handler of the server's requests
//! and notifications, and a [`MessageTap`] that sees every JSON-RPC message both ways
//! ([`Hooks`]). A test connection uses the defaults (rmcp's do-nothing client and no tap); a
//! Try-it session (`crate::session`) brings its own handler (elicitation, roots, sampling,
//! progress, logs) and its protocol trace.
//!
//! [`Tapped`] puts a tap in front of any rmcp transport, so whatever lifecycle a connection
//! runs (`initialize`, or the modern era's per-request metadata) the tap sees the same
//! messages the transport carries.

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::{DynService, Service};
use rmcp::transport::Transport;
use rmcp::{RoleClient, ServiceExt};

use super::client_config;

/// Sees every message of a connection: [`MessageTap::sent`] when a message is handed to the
/// transport, [`MessageTap::received`] when one comes out of it. Called on the connection's
/// own tasks: keep it quick.
pub trait MessageTap: Send + Sync + 'static {
    fn sent(&self, message: &ClientJsonRpcMessage);
    fn received(&self, message: &ServerJsonRpcMessage);
}

type MakeHandler = dyn Fn() -> Box<dyn DynService<RoleClient>> + Send + Sync;

/// The handler and the tap a connection is started with.
#[derive(Clone, Default)]
pub struct Hooks {
    handler: Option<Arc<MakeHandler>>,
    tap: Option<Arc<dyn MessageTap>>,
}

impl Hooks {
    /// `handler` answers the server's requests and hears its notifications; it is built once
    /// per handshake attempt (`auto` may try two transports). `tap` sees every message.
    pub fn new<H, F>(handler: F, tap: Option<Arc<dyn MessageTap>>) -> Hooks
    where
        H: Service<RoleClient>,
        F: Fn() -> H + Send + Sync + 'static,
    {
        Hooks {
            handler: Some(Arc::new(move || handler().into_dyn())),
            tap,
        }
    }

    /// The service to run the connection with: the session's handler, or rmcp's do-nothing
    /// client with Plugboard's client information.
    pub fn service(&self) -> Box<dyn DynService<RoleClient>> {
        match &self.handler {
            Some(make) => make(),
            None => client_config().into_dyn(),
        }
    }

    /// `transport` with this connection's tap in front of it.
    pub fn tapped<T: Transport<RoleClient>>(&self, transport: T) -> Tapped<T> {
        Tapped {
            inner: transport,
            tap: self.tap.clone(),
        }
    }
}

/// A transport whose messages a [`MessageTap`] sees.
pub struct Tapped<T> {
    inner: T,
    tap: Option<Arc<dyn MessageTap>>,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Tapped<T> {
    type Error = T::Error;

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
