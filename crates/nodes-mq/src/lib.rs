//! Queue nodes on the embedded queue manager: MQInput, MQOutput, MQReply, MQGet.

mod coordinated;
pub mod headers;
pub mod input;
pub mod output;

use sluice_node_api::{NodeSpec, Resource, ResourceError};

pub use input::MQ_INPUT;
pub use output::{MQ_GET, MQ_OUTPUT, MQ_REPLY};

/// The queue manager's unit of work as a resource of the invocation: joined by a transactional
/// MQInput with its get; queue nodes downstream put and get inside it.
pub struct QueueWork(Option<sluice_qm::UnitOfWork>);

impl QueueWork {
    /// Its key in the invocation's unit of work (one queue manager per server).
    pub const KEY: &str = "queues";

    pub fn new(uow: sluice_qm::UnitOfWork) -> QueueWork {
        QueueWork(Some(uow))
    }

    /// The queue manager's unit of work, until it is committed or rolled back.
    pub fn uow(&mut self) -> Option<&mut sluice_qm::UnitOfWork> {
        self.0.as_mut()
    }

    /// The queue manager's unit of work, taken out to be ended by its owner.
    pub fn into_inner(mut self) -> Option<sluice_qm::UnitOfWork> {
        self.0.take()
    }
}

impl Resource for QueueWork {
    fn commit(&mut self) -> Result<(), ResourceError> {
        match self.0.take() {
            Some(u) => u
                .commit()
                .map_err(|e| ResourceError::new("the queue manager", e)),
            None => Ok(()),
        }
    }

    fn rollback(&mut self) {
        if let Some(u) = self.0.take() {
            u.rollback();
        }
    }
}

pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    for s in [&MQ_INPUT, &MQ_OUTPUT, &MQ_REPLY, &MQ_GET] {
        r(s);
    }
}
