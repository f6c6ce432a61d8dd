//! PROPAGATE from ESQL, through the engine.

use sluice_esql::runtime::{Host, PropagateTo};
use sluice_node_api::{Ctx, Message, NodeError, Terminal, Tree};

/// Output terminals of ESQL nodes by the number `PROPAGATE TO TERMINAL n` uses.
const NUMBERED: [&str; 5] = ["out", "out1", "out2", "out3", "out4"];

pub struct CtxHost<'c, 'a> {
    pub ctx: &'c mut Ctx<'a>,
    /// The node's output terminals, by name, in declaration order.
    pub outputs: &'static [sluice_node_api::TerminalSpec],
}

impl CtxHost<'_, '_> {
    fn terminal(&self, name: &str) -> Result<Terminal, NodeError> {
        self.outputs
            .iter()
            .position(|t| t.name == name)
            .map(|i| Terminal(i as u16))
            .ok_or_else(|| {
                NodeError::recoverable(format!("PROPAGATE to unknown terminal '{name}'"))
            })
    }
}

impl Host for CtxHost<'_, '_> {
    fn propagate(
        &mut self,
        to: PropagateTo,
        msg: &mut Message,
        environment: &mut Tree,
    ) -> Result<(), NodeError> {
        // The Environment lives with the invocation while downstream nodes run.
        std::mem::swap(&mut self.ctx.inv.environment, environment);
        let r = match to {
            PropagateTo::Terminal(name) => self
                .terminal(&name)
                .and_then(|t| self.ctx.propagate(t, msg)),
            PropagateTo::TerminalIndex(i) => {
                match usize::try_from(i).ok().and_then(|i| NUMBERED.get(i)) {
                    Some(name) => self.terminal(name).and_then(|t| self.ctx.propagate(t, msg)),
                    None => Err(NodeError::recoverable(format!(
                        "PROPAGATE to unknown terminal number {i}"
                    ))),
                }
            }
            PropagateTo::Label(l) => self.ctx.propagate_to_label(&l, msg),
        };
        std::mem::swap(&mut self.ctx.inv.environment, environment);
        r
    }
}
