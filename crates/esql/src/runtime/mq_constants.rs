//! The MQ constants ESQL written for the product uses by name (`MQFMT_STRING`,
//! `MQPER_PERSISTENT`, `MQMT_REPLY`, …), with IBM MQ's values; folded at compile time.

use bytes::Bytes;
use sluice_esql_scalar::Value;

const INTEGERS: &[(&str, i64)] = &[
    ("MQMD_VERSION_1", 1),
    ("MQMD_VERSION_2", 2),
    ("MQMD_CURRENT_VERSION", 2),
    ("MQPER_NOT_PERSISTENT", 0),
    ("MQPER_PERSISTENT", 1),
    ("MQPER_PERSISTENCE_AS_Q_DEF", 2),
    ("MQPER_PERSISTENCE_AS_PARENT", -1),
    ("MQMT_SYSTEM_FIRST", 1),
    ("MQMT_REQUEST", 1),
    ("MQMT_REPLY", 2),
    ("MQMT_REPORT", 4),
    ("MQMT_DATAGRAM", 8),
    ("MQMT_APPL_FIRST", 65536),
    ("MQEI_UNLIMITED", -1),
    ("MQPRI_PRIORITY_AS_Q_DEF", -1),
    ("MQPRI_PRIORITY_AS_PARENT", -2),
    ("MQFB_NONE", 0),
    ("MQFB_SYSTEM_FIRST", 1),
    ("MQFB_QUIT", 256),
    ("MQFB_EXPIRATION", 258),
    ("MQFB_COA", 259),
    ("MQFB_COD", 260),
    ("MQFB_APPL_FIRST", 65536),
    ("MQRO_NONE", 0),
    ("MQRO_NEW_MSG_ID", 0),
    ("MQRO_COPY_MSG_ID_TO_CORREL_ID", 0),
    ("MQRO_DEAD_LETTER_Q", 0),
    ("MQRO_PAN", 1),
    ("MQRO_NAN", 2),
    ("MQRO_ACTIVITY", 4),
    ("MQRO_PASS_CORREL_ID", 64),
    ("MQRO_PASS_MSG_ID", 128),
    ("MQRO_COA", 256),
    ("MQRO_COA_WITH_DATA", 768),
    ("MQRO_COA_WITH_FULL_DATA", 1792),
    ("MQRO_COD", 2048),
    ("MQRO_COD_WITH_DATA", 6144),
    ("MQRO_COD_WITH_FULL_DATA", 14336),
    ("MQRO_EXPIRATION", 2097152),
    ("MQRO_EXPIRATION_WITH_DATA", 6291456),
    ("MQRO_EXPIRATION_WITH_FULL_DATA", 14680064),
    ("MQRO_EXCEPTION", 16777216),
    ("MQRO_EXCEPTION_WITH_DATA", 50331648),
    ("MQRO_EXCEPTION_WITH_FULL_DATA", 117440512),
    ("MQRO_DISCARD_MSG", 134217728),
    ("MQRO_PASS_DISCARD_AND_EXPIRY", 16384),
    ("MQENC_NATIVE", 546),
    ("MQENC_INTEGER_NORMAL", 1),
    ("MQENC_INTEGER_REVERSED", 2),
    ("MQENC_DECIMAL_NORMAL", 16),
    ("MQENC_DECIMAL_REVERSED", 32),
    ("MQENC_FLOAT_IEEE_NORMAL", 256),
    ("MQENC_FLOAT_IEEE_REVERSED", 512),
    ("MQENC_FLOAT_S390", 768),
    ("MQCCSI_UNDEFINED", 0),
    ("MQCCSI_DEFAULT", 0),
    ("MQCCSI_Q_MGR", 0),
    ("MQCCSI_EMBEDDED", -1),
    ("MQCCSI_INHERIT", -2),
    ("MQCCSI_APPL", -3),
    ("MQCCSI_AS_PUBLISHED", -4),
    ("MQMF_NONE", 0),
    ("MQMF_SEGMENTATION_INHIBITED", 0),
    ("MQMF_SEGMENTATION_ALLOWED", 1),
    ("MQMF_SEGMENT", 2),
    ("MQMF_LAST_SEGMENT", 4),
    ("MQMF_MSG_IN_GROUP", 8),
    ("MQMF_LAST_MSG_IN_GROUP", 16),
    ("MQOL_UNDEFINED", -1),
    ("MQRFH_VERSION_1", 1),
    ("MQRFH_VERSION_2", 2),
    ("MQRFH_NO_FLAGS", 0),
    ("MQRFH_STRUC_LENGTH_FIXED", 32),
    ("MQRFH_STRUC_LENGTH_FIXED_2", 36),
    ("MQDLH_VERSION_1", 1),
    ("MQDLH_CURRENT_VERSION", 1),
    ("MQCC_OK", 0),
    ("MQCC_WARNING", 1),
    ("MQCC_FAILED", 2),
    ("MQRC_NONE", 0),
];

const CHARACTERS: &[(&str, &str)] = &[
    ("MQFMT_NONE", "        "),
    ("MQFMT_STRING", "MQSTR   "),
    ("MQFMT_RF_HEADER", "MQHRF   "),
    ("MQFMT_RF_HEADER_2", "MQHRF2  "),
    ("MQFMT_DEAD_LETTER_HEADER", "MQDEAD  "),
    ("MQFMT_XMIT_Q_HEADER", "MQXMIT  "),
    ("MQFMT_MD_EXTENSION", "MQHMDE  "),
    ("MQFMT_ADMIN", "MQADMIN "),
    ("MQFMT_EVENT", "MQEVENT "),
    ("MQFMT_PCF", "MQPCF   "),
    ("MQFMT_TRIGGER", "MQTRIG  "),
    ("MQFMT_CICS", "MQCICS  "),
    ("MQFMT_IMS", "MQIMS   "),
    ("MQFMT_IMS_VAR_STRING", "MQIMSVS "),
    ("MQFMT_COMMAND_1", "MQCMD1  "),
    ("MQFMT_COMMAND_2", "MQCMD2  "),
    ("MQFMT_REF_MSG_HEADER", "MQHREF  "),
    ("MQFMT_WORK_INFO_HEADER", "MQHWIH  "),
    ("MQMD_STRUC_ID", "MD  "),
    ("MQRFH_STRUC_ID", "RFH "),
    ("MQDLH_STRUC_ID", "DLH "),
];

/// All-zero identifiers, 24 bytes (32 for the accounting token).
const ZERO_IDS: &[(&str, usize)] = &[
    ("MQMI_NONE", 24),
    ("MQCI_NONE", 24),
    ("MQGI_NONE", 24),
    ("MQACT_NONE", 32),
];

/// The value of the MQ constant `name`, if it is one.
pub fn value(name: &str) -> Option<Value> {
    if !name.starts_with("MQ") {
        return None;
    }
    if let Some((_, v)) = INTEGERS.iter().find(|(n, _)| *n == name) {
        return Some(Value::Integer(*v));
    }
    if let Some((_, v)) = CHARACTERS.iter().find(|(n, _)| *n == name) {
        return Some(Value::Character((*v).into()));
    }
    ZERO_IDS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, len)| Value::Blob(Bytes::from(vec![0u8; *len])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_formats_are_eight_characters() {
        let mut names: Vec<&str> = INTEGERS.iter().map(|(n, _)| *n).collect();
        names.extend(CHARACTERS.iter().map(|(n, _)| *n));
        names.extend(ZERO_IDS.iter().map(|(n, _)| *n));
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "a name given twice");
        for (n, v) in CHARACTERS {
            if n.starts_with("MQFMT_") {
                assert_eq!(v.len(), 8, "{n}");
            }
        }
        assert_eq!(value("MQPER_PERSISTENT"), Some(Value::Integer(1)));
        assert_eq!(
            value("MQFMT_STRING"),
            Some(Value::Character("MQSTR   ".into()))
        );
        assert_eq!(
            value("MQMI_NONE"),
            Some(Value::Blob(Bytes::from(vec![0; 24])))
        );
        assert_eq!(value("MQ_NOT_A_CONSTANT"), None);
    }
}
