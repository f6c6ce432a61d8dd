//! The message models ESQL's PARSE reads with: DFDL schemas of the project, named by the SET
//! clause (`models/NAME.xsd`) with the message type in TYPE, compiled at first use and kept for
//! the node's later messages.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use sluice_dfdl::{DfdlParser, Schema};

use super::exec::RtError;

/// The DFDL parsers a node's PARSE statements used, by model and message type.
#[derive(Default)]
pub struct MessageModels {
    /// The project folder models are read from; `None` where there is none (tests).
    project_dir: Option<PathBuf>,
    parsers: Mutex<HashMap<(String, String), Arc<DfdlParser>>>,
}

impl MessageModels {
    /// Models of the project in `project_dir`.
    pub fn new(project_dir: &Path) -> MessageModels {
        MessageModels {
            project_dir: Some(project_dir.to_path_buf()),
            parsers: Mutex::new(HashMap::new()),
        }
    }

    /// The parser of message type `ty` (empty: the model's only global element) of the DFDL
    /// schema `set`.
    pub(crate) fn dfdl(&self, set: &str, ty: &str) -> Result<Arc<DfdlParser>, RtError> {
        let key = (set.to_string(), ty.to_string());
        if let Some(p) = self.parsers.lock().get(&key) {
            return Ok(Arc::clone(p));
        }
        let dir = self.project_dir.as_deref().ok_or_else(|| {
            RtError::general(
                "PARSE with DOMAIN 'DFDL' needs a project folder to read the model from",
            )
        })?;
        if set.is_empty() {
            return Err(RtError::general(
                "PARSE with DOMAIN 'DFDL' needs SET, the model (models/NAME.xsd)",
            ));
        }
        let rel = Path::new(set);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| c == std::path::Component::ParentDir)
        {
            return Err(RtError::general(format!(
                "PARSE SET '{set}': a model is a file of the project, relative to its folder"
            )));
        }
        let schema = Schema::load(&dir.join(rel))
            .map_err(|e| RtError::general(format!("PARSE SET '{set}': {e}")))?;
        // A TYPE written the product's way, `{namespace}:Name`, names the element Name.
        let name = ty.rsplit([':', '}']).next().unwrap_or(ty);
        let name = if name.is_empty() {
            match schema.root_names().as_slice() {
                [only] => only.to_string(),
                names => {
                    return Err(RtError::general(format!(
                        "PARSE SET '{set}' needs TYPE, one of: {}",
                        names.join(", ")
                    )));
                }
            }
        } else {
            name.to_string()
        };
        let parser = DfdlParser::new(Arc::new(schema), &name)
            .map_err(|e| RtError::general(format!("PARSE SET '{set}' TYPE '{ty}': {e}")))?;
        let parser = Arc::new(parser);
        self.parsers.lock().insert(key, Arc::clone(&parser));
        Ok(parser)
    }
}
