//! Queue nodes on the embedded queue manager: MQInput, MQOutput, MQReply, MQGet.

pub mod headers;
pub mod input;
pub mod output;

use sluice_node_api::NodeSpec;

pub use input::MQ_INPUT;
pub use output::{MQ_GET, MQ_OUTPUT, MQ_REPLY};

/// The unit of work of an invocation started by a transactional MQInput; queue nodes downstream
/// put and get inside it.
pub struct MqTransaction(pub sluice_qm::UnitOfWork);

pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    for s in [&MQ_INPUT, &MQ_OUTPUT, &MQ_REPLY, &MQ_GET] {
        r(s);
    }
}
