//! The unit of work of an invocation: every resource it holds until it ends.
//!
//! Transactional work (a queue manager's gets and puts under syncpoint, a database transaction)
//! and transport state that must be answered (an HTTP request waiting for its reply) join the
//! invocation's one [`UnitOfWork`]. A resource is found again by its type and a key (the
//! datasource's name, say), so the node that joins it and the nodes downstream that use it
//! share it without knowing of each other.
//!
//! When the invocation ends, the input node commits or rolls back the whole unit of work.
//! Resources commit in the reverse of the order they joined: the input node's own resource (its
//! get) joins first and so commits last, after everything the flow did with the message. If a
//! commit fails, the resources not yet committed are rolled back and the error says which
//! failed: the input message is then backed out and comes again (at least once, never lost),
//! while what committed before the failure stays committed.
//!
//! A flow with `transaction: coordinated` commits in two phases instead: its input node asks
//! every resource to prepare ([`UnitOfWork::prepare`]), records the decision with the queue
//! manager, then commits what was prepared ([`Prepared::commit`]). The protocol and its
//! invariants are in the queue manager's `indoubt` module (`sluice_qm::DECISION_QUEUE`).

use std::any::{Any, TypeId};

/// How a flow's units of work commit (its `transaction` setting).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Transaction {
    /// Each resource commits in turn, the last joined first (`automatic`).
    #[default]
    Automatic,
    /// Two-phase commit with the queue manager as coordinator (`coordinated`).
    Coordinated,
}

impl Transaction {
    /// The setting's word in a flow file.
    pub fn name(self) -> &'static str {
        match self {
            Transaction::Automatic => "automatic",
            Transaction::Coordinated => "coordinated",
        }
    }
}

/// A resource held by an invocation.
pub trait Resource: Any + Send {
    /// Make the work done under it permanent.
    fn commit(&mut self) -> Result<(), ResourceError>;

    /// Undo the work done under it.
    fn rollback(&mut self);

    /// Phase one of a coordinated commit: make the work durable without committing it, as
    /// transaction `xid`. A resource that cannot prepare answers [`Prepare::OnePhase`] (the
    /// default) and is committed in one phase once every other resource prepared.
    fn prepare(&mut self, _xid: &str) -> Result<Prepare, ResourceError> {
        Ok(Prepare::OnePhase)
    }

    /// Phase two, after the decision to commit is on disk: commit what was prepared.
    fn commit_prepared(&mut self) -> Result<(), ResourceError> {
        Ok(())
    }

    /// Undo what was prepared (the decision was not to commit).
    fn rollback_prepared(&mut self) {}
}

/// What a resource did when asked to prepare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prepare {
    /// It prepared under the id it was given; it ends with `commit_prepared` or
    /// `rollback_prepared`.
    Prepared,
    /// It had nothing to do (no statement ran): it is ended already.
    Nothing,
    /// It cannot prepare: it commits in one phase, after the others prepared (the last
    /// resource).
    OnePhase,
}

/// A resource that could not commit.
#[derive(Debug, thiserror::Error)]
#[error("cannot commit {resource}: {source}")]
pub struct ResourceError {
    /// What failed to commit (`queue manager`, `datasource ORDERS`).
    pub resource: String,
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

impl ResourceError {
    pub fn new(
        resource: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> ResourceError {
        ResourceError {
            resource: resource.into(),
            source: source.into(),
        }
    }
}

struct Joined {
    ty: TypeId,
    key: Box<str>,
    resource: Box<dyn Resource>,
}

/// The resources of one invocation.
#[derive(Default)]
pub struct UnitOfWork {
    joined: Vec<Joined>,
}

impl UnitOfWork {
    /// The resource of type `R` joined under `key`.
    pub fn get_mut<R: Resource>(&mut self, key: &str) -> Option<&mut R> {
        let ty = TypeId::of::<R>();
        self.joined
            .iter_mut()
            .find(|j| j.ty == ty && &*j.key == key)
            .and_then(|j| (j.resource.as_mut() as &mut dyn Any).downcast_mut())
    }

    /// Join `resource` under `key`, replacing one of its type joined under the same key.
    pub fn join<R: Resource>(&mut self, key: &str, resource: R) -> &mut R {
        self.leave::<R>(key);
        self.joined.push(Joined {
            ty: TypeId::of::<R>(),
            key: key.into(),
            resource: Box::new(resource),
        });
        let last = self.joined.len() - 1;
        (self.joined[last].resource.as_mut() as &mut dyn Any)
            .downcast_mut()
            .expect("the resource just joined has type R")
    }

    /// The resource of type `R` under `key`, joined first with `begin` when it is not there.
    pub fn get_or_join<R: Resource, E>(
        &mut self,
        key: &str,
        begin: impl FnOnce() -> Result<R, E>,
    ) -> Result<&mut R, E> {
        if self.get_mut::<R>(key).is_none() {
            let r = begin()?;
            return Ok(self.join(key, r));
        }
        Ok(self
            .get_mut::<R>(key)
            .expect("the resource was found just before"))
    }

    /// Take the resource of type `R` under `key` out of the unit of work, neither committed
    /// nor rolled back (an input node keeps its batch open across invocations this way).
    pub fn leave<R: Resource>(&mut self, key: &str) -> Option<R> {
        let ty = TypeId::of::<R>();
        let i = self
            .joined
            .iter()
            .position(|j| j.ty == ty && &*j.key == key)?;
        let j = self.joined.remove(i);
        let any: Box<dyn Any> = j.resource;
        any.downcast().ok().map(|b| *b)
    }

    /// Whether no resource joined.
    pub fn is_empty(&self) -> bool {
        self.joined.is_empty()
    }

    /// How many resources joined.
    pub fn len(&self) -> usize {
        self.joined.len()
    }

    /// Commit every resource, the last joined first. The first failure rolls back the rest.
    pub fn commit(&mut self) -> Result<(), ResourceError> {
        let mut joined = std::mem::take(&mut self.joined);
        while let Some(mut j) = joined.pop() {
            if let Err(e) = j.resource.commit() {
                while let Some(mut rest) = joined.pop() {
                    rest.resource.rollback();
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// Phase one of a coordinated commit: every resource prepares, each under an id from
    /// `next_xid`, the last joined first; then the resources that cannot prepare commit in
    /// one phase (their commit is the last moment the whole can still be undone). The first
    /// failure rolls back everything: what was prepared with `rollback_prepared`, the rest
    /// with `rollback`.
    pub fn prepare<E: std::error::Error + Send + Sync + 'static>(
        &mut self,
        mut next_xid: impl FnMut() -> Result<String, E>,
    ) -> Result<Prepared, ResourceError> {
        let mut joined = std::mem::take(&mut self.joined);
        let mut prepared = Prepared::default();
        let mut one_phase = Vec::new();
        let mut failure = None;
        while let Some(mut j) = joined.pop() {
            let xid = match next_xid() {
                Ok(x) => x,
                Err(e) => {
                    failure = Some(ResourceError::new("the transaction coordinator", e));
                    joined.push(j);
                    break;
                }
            };
            match j.resource.prepare(&xid) {
                Ok(Prepare::Prepared) => prepared.joined.push((xid, j)),
                Ok(Prepare::Nothing) => {}
                Ok(Prepare::OnePhase) => one_phase.push(j),
                Err(e) => {
                    j.resource.rollback();
                    failure = Some(e);
                    break;
                }
            }
        }
        if failure.is_none() {
            while let Some(mut j) = one_phase.pop() {
                if let Err(e) = j.resource.commit() {
                    failure = Some(e);
                    break;
                }
            }
        }
        match failure {
            None => Ok(prepared),
            Some(e) => {
                for mut j in joined.into_iter().chain(one_phase) {
                    j.resource.rollback();
                }
                prepared.rollback();
                Err(e)
            }
        }
    }

    /// Roll every resource back, the last joined first.
    pub fn rollback(&mut self) {
        let mut joined = std::mem::take(&mut self.joined);
        while let Some(mut j) = joined.pop() {
            j.resource.rollback();
        }
    }
}

/// The resources of a unit of work that prepared, waiting for the decision.
#[derive(Default)]
pub struct Prepared {
    joined: Vec<(String, Joined)>,
}

impl Prepared {
    /// The ids the resources prepared under: what the decision must name.
    pub fn xids(&self) -> Vec<String> {
        self.joined.iter().map(|(x, _)| x.clone()).collect()
    }

    /// Whether no resource prepared (no decision is needed).
    pub fn is_empty(&self) -> bool {
        self.joined.is_empty()
    }

    /// Phase two, once the decision is on disk: commit every prepared resource. Every one is
    /// tried; the failures are returned (those transactions stay prepared, for recovery).
    pub fn commit(self) -> Vec<ResourceError> {
        let mut failed = Vec::new();
        for (_, mut j) in self.joined {
            if let Err(e) = j.resource.commit_prepared() {
                failed.push(e);
            }
        }
        failed
    }

    /// No decision to commit: undo what every resource prepared.
    pub fn rollback(self) {
        for (_, mut j) in self.joined {
            j.resource.rollback_prepared();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// Records what happened to it in a shared log.
    struct Recorder {
        name: &'static str,
        fail: bool,
        log: Arc<Mutex<Vec<String>>>,
    }

    impl Resource for Recorder {
        fn commit(&mut self) -> Result<(), ResourceError> {
            self.log
                .lock()
                .unwrap()
                .push(format!("commit {}", self.name));
            if self.fail {
                return Err(ResourceError::new(self.name, "refused"));
            }
            Ok(())
        }

        fn rollback(&mut self) {
            self.log
                .lock()
                .unwrap()
                .push(format!("rollback {}", self.name));
        }

        fn prepare(&mut self, xid: &str) -> Result<Prepare, ResourceError> {
            self.log
                .lock()
                .unwrap()
                .push(format!("prepare {} {xid}", self.name));
            match self.name {
                "one" => Ok(Prepare::OnePhase),
                _ if self.fail => Err(ResourceError::new(self.name, "refused")),
                _ => Ok(Prepare::Prepared),
            }
        }

        fn commit_prepared(&mut self) -> Result<(), ResourceError> {
            self.log
                .lock()
                .unwrap()
                .push(format!("commit prepared {}", self.name));
            Ok(())
        }

        fn rollback_prepared(&mut self) {
            self.log
                .lock()
                .unwrap()
                .push(format!("rollback prepared {}", self.name));
        }
    }

    fn xids() -> impl FnMut() -> Result<String, std::io::Error> {
        let mut n = 0;
        move || {
            n += 1;
            Ok(format!("x{n}"))
        }
    }

    #[test]
    fn prepare_commits_the_one_phase_resource_after_the_others_prepared() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut u = UnitOfWork::default();
        u.join("a", recorder("a", false, &log));
        u.join("one", recorder("one", false, &log));
        u.join("b", recorder("b", false, &log));
        let p = u.prepare(xids()).unwrap();
        assert_eq!(p.xids(), ["x1", "x3"]);
        assert!(u.is_empty());
        assert!(p.commit().is_empty());
        assert_eq!(
            *log.lock().unwrap(),
            [
                "prepare b x1",
                "prepare one x2",
                "prepare a x3",
                "commit one",
                "commit prepared b",
                "commit prepared a"
            ]
        );
    }

    #[test]
    fn prepare_rolls_back_prepared_and_unprepared_when_one_fails() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut u = UnitOfWork::default();
        u.join("a", recorder("a", false, &log));
        u.join("one", recorder("one", false, &log));
        u.join("bad", recorder("bad", true, &log));
        u.join("b", recorder("b", false, &log));
        let e = u.prepare(xids()).err().unwrap();
        assert_eq!(e.resource, "bad");
        assert_eq!(
            *log.lock().unwrap(),
            [
                "prepare b x1",
                "prepare bad x2",
                "rollback bad",
                "rollback a",
                "rollback one",
                "rollback prepared b"
            ]
        );
    }

    fn recorder(name: &'static str, fail: bool, log: &Arc<Mutex<Vec<String>>>) -> Recorder {
        Recorder {
            name,
            fail,
            log: Arc::clone(log),
        }
    }

    #[test]
    fn commit_runs_last_joined_first_and_rolls_back_the_rest_when_one_fails() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut u = UnitOfWork::default();
        u.join("input", recorder("input", false, &log));
        u.join("db", recorder("db", true, &log));
        u.join("out", recorder("out", false, &log));
        let e = u.commit().unwrap_err();
        assert_eq!(e.resource, "db");
        assert_eq!(
            *log.lock().unwrap(),
            ["commit out", "commit db", "rollback input"]
        );
        assert!(u.is_empty());
    }

    #[test]
    fn get_or_join_finds_the_resource_when_it_joined_under_the_same_key() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut u = UnitOfWork::default();
        u.get_or_join("a", || Ok::<_, ()>(recorder("a", false, &log)))
            .unwrap();
        let again = u
            .get_or_join("a", || Ok::<_, ()>(recorder("other", false, &log)))
            .unwrap();
        assert_eq!(again.name, "a");
        u.get_or_join("b", || Ok::<_, ()>(recorder("b", false, &log)))
            .unwrap();
        assert_eq!(u.len(), 2);
        assert_eq!(u.leave::<Recorder>("a").map(|r| r.name), Some("a"));
        assert!(u.get_mut::<Recorder>("a").is_none());
        u.rollback();
        assert_eq!(*log.lock().unwrap(), ["rollback b"]);
    }
}
