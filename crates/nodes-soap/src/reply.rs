//! SOAPReply: answers the request that started a SOAPInput invocation with the message's
//! envelope, adding the WS-Addressing reply headers, and sends the reply to the request's
//! ReplyTo address when that is not anonymous.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use sluice_node_api::http_listener::HttpResponse;
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, ExceptionKind,
    Message, Node, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal,
    Terminals, properties,
};
use sluice_nodes_core::terminals::{FailureOut, In};
use sluice_parsers::soap::{self, SoapVersion, fault};

use crate::client::{SoapClient, new_client, post};
use crate::mtom::{self, Mtom};
use crate::pending::PendingSoapReply;
use crate::validation::check_body;
use crate::{envelope, wsa};

pub static SOAP_REPLY: NodeSpec = NodeSpec {
    type_name: "SOAPReply",
    summary: "Answers the request that started a SOAPInput invocation with the message body as a SOAP envelope \
              (a SOAP domain body as it is, an XMLNSC body wrapped in an envelope of the request's version). \
              With WS-Addressing on at the SOAPInput, the reply carries MessageID, RelatesTo, Action and To, and \
              a reply for a non-anonymous ReplyTo address is sent there while the request gets `202 Accepted`. \
              A body holding a Fault is sent with status 500.",
    inputs: In::SPECS,
    outputs: FailureOut::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Reached without a SOAPInput request to answer, it raises",
        properties: "",
        esql: "",
        input: ExampleInput::xml("<echo><text>hi</text></echo>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Raises("there is no SOAP request to reply to"),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<SoapReplyProps>(),
};

properties! {
    /// SOAPReply's properties.
    pub struct SoapReplyProps {
        /// Whether a client that went away is ignored rather than raised as an exception.
        ignore_transport_failures: bool = "true",
        /// How long an asynchronous reply to a ReplyTo address may take.
        reply_to_timeout_secs: u64 = "60",
        /// The product's "Allow MTOM": the reply is written as MTOM (XOP) when the SOAPInput
        /// validates, the message has no `Attachment` children (those go as SwA), and Body
        /// elements the WSDL's schemas declare as base64Binary hold at least 1000 bytes; each
        /// such content goes in a binary part. `LocalEnvironment.Destination.SOAP.Reply.AllowMTOM`
        /// and `.MTOMThreshold` (bytes) override it per message.
        allow_mtom: bool = "false",
    }
}

impl BuildNode for SoapReplyProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(SoapReply {
            ignore_failures: self.ignore_transport_failures,
            timeout: Duration::from_secs(self.reply_to_timeout_secs.max(1)),
            allow_mtom: self.allow_mtom,
            runtime: b.services.runtime.clone(),
            client: std::sync::OnceLock::new(),
        })))
    }
}

struct SoapReply {
    ignore_failures: bool,
    allow_mtom: bool,
    timeout: Duration,
    runtime: Option<tokio::runtime::Handle>,
    client: std::sync::OnceLock<Option<SoapClient>>,
}

impl SoapReply {
    /// Send the reply to `address` in the background; the flow does not wait for it.
    fn send_async(
        &self,
        address: String,
        body: Bytes,
        content_type: String,
        version: SoapVersion,
        action: String,
    ) -> Result<(), NodeError> {
        let client = self
            .client
            .get_or_init(|| new_client().ok())
            .clone()
            .ok_or_else(|| {
                NodeError::recoverable("the HTTP client for ReplyTo addresses could not be set up")
            })?;
        let runtime = self
            .runtime
            .clone()
            .ok_or_else(|| NodeError::recoverable("no runtime to send an asynchronous reply on"))?;
        let timeout = self.timeout;
        let mut headers = vec![("Content-Type".to_string(), content_type)];
        if version == SoapVersion::V11 {
            headers.push(("SOAPAction".to_string(), format!("\"{action}\"")));
        }
        runtime.spawn(async move {
            match post(&client, &address, &headers, body, timeout).await {
                Ok(a) if a.status < 300 => {}
                Ok(a) => tracing::warn!(status = a.status, %address, "The ReplyTo address refused the reply."),
                Err(error) => tracing::warn!(%error, %address, "Failed to send the reply to the ReplyTo address."),
            }
        });
        Ok(())
    }
}

impl Node for SoapReply {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let Some(pending) = ctx
            .inv
            .unit_of_work
            .leave::<PendingSoapReply>(PendingSoapReply::KEY)
        else {
            return Err(NodeError::recoverable(
                "there is no SOAP request to reply to (it was answered already, or no SOAPInput started this invocation)",
            ));
        };
        let prepared = (|| -> Result<(Bytes, Cow<'static, str>, SoapVersion, bool), NodeError> {
            let soap_id = envelope::body_as_soap(msg, pending.version)?;
            let version = soap::version_of(&mut msg.root, soap_id)?;
            let is_fault = fault::read(&mut msg.root, soap_id)?.is_some();
            if let Some(v) = pending.validator.as_deref()
                && !is_fault
            {
                check_body(&mut msg.root, soap_id, v)?;
            }
            if let Some(a) = &pending.addressing {
                wsa::write_reply(&mut msg.root, soap_id, a, &pending.reply_action)?;
            }
            let mtom = match &pending.binary_elements {
                Some(elements) if !is_fault => {
                    let (allow, threshold) =
                        mtom::settings(&mut msg.local_environment, "Reply", self.allow_mtom)?;
                    allow.then_some(Mtom {
                        elements,
                        threshold,
                    })
                }
                _ => None,
            };
            let (body, multipart) = mtom::write(&mut msg.root, soap_id, version, mtom)?;
            let content_type = match multipart {
                Some(ct) => Cow::Owned(ct),
                None => Cow::Borrowed(version.content_type()),
            };
            Ok((Bytes::from(body), content_type, version, is_fault))
        })();
        let (body, content_type, version, is_fault) = match prepared {
            Ok(x) => x,
            Err(e) => {
                // Put back, so that SOAPInput answers the request with a fault.
                ctx.inv.unit_of_work.join(PendingSoapReply::KEY, pending);
                return Err(e);
            }
        };
        let async_to = pending
            .addressing
            .as_ref()
            .and_then(|a| a.async_reply_to().map(str::to_string));
        let no_reply = pending.addressing.as_ref().is_some_and(|a| a.no_reply());
        let response = if async_to.is_some() || no_reply {
            HttpResponse {
                status: 202,
                headers: Vec::new(),
                body: Bytes::new(),
            }
        } else {
            HttpResponse {
                status: if is_fault { 500 } else { 200 },
                headers: vec![(
                    "Content-Type".into(),
                    match &content_type {
                        Cow::Borrowed(s) => Bytes::from_static(s.as_bytes()),
                        Cow::Owned(s) => Bytes::from(s.clone()),
                    },
                )],
                body: body.clone(),
            }
        };
        let sent = pending.sender.send(response).is_ok();
        if let Some(address) = async_to {
            self.send_async(
                address,
                body,
                content_type.into_owned(),
                version,
                pending.reply_action,
            )?;
        }
        if !sent && !self.ignore_failures {
            return Err(NodeError::new(
                ExceptionKind::Socket,
                3169,
                "the SOAP client closed the connection before the reply was sent",
            ));
        }
        ctx.propagate(FailureOut::Out, msg)
    }
}
