//! Writers for the eight representations of the SaleList message.
//!
//! Each format is an envelope start (which may name the repetition count), the
//! repetitions, and an envelope end. All values are ASCII letters, digits,
//! spaces and dots, so nothing needs escaping in any format and the length of
//! a repetition grows by exactly the bytes added to a description.
//!
//! Layouts:
//! * `xml`: `<Parent><First>1</First><SaleList>…</SaleList>…<Last>Test</Last></Parent>`,
//!   white space removed, as the seeds measured it.
//! * `soap`: the seeds' SOAP 1.1 request: Envelope / Header (WS-Addressing
//!   Action and MessageID) / Body / `tns:SaleRequest` / `SaleEnvelope` with a
//!   `Header/SaleListCount`, the SaleLists and a `Trailer/CompletionTime`.
//! * `swa`: SOAP with Attachments, `multipart/related` with CR LF line ends: a root part
//!   holding the seeds' SOAP 1.1 SaleRequest envelope (one empty SaleList), then one
//!   attachment (`Content-ID: <salelist>`, `application/xml`) holding the `xml` message.
//! * `json`: `{"Parent":{"First":1,"SaleList":[{"Invoice":[{…},{…}]},…],"Last":"Test"}}`;
//!   repeated elements are arrays (`Initial`, `Item`, `Code`), money and
//!   quantities are JSON numbers, codes stay strings because their leading
//!   zero matters.
//! * `delimited`: a first line `1`, one comma-separated line per SaleList
//!   (per invoice: Initial, Initial, Surname, then per item Code, Code, Code,
//!   Description, Category, Price, Quantity, then Balance, Currency), and a
//!   last line `Test`.
//! * `fixed`: no separators. Header: First (4 digits) and SaleListCount
//!   (8 digits). Each SaleList record is two invoices of Initial (1) ×2,
//!   Surname (20), two items of Code (2) ×3, Description (30), Category (20),
//!   Price (6, `000.30`), Quantity (2), then Balance (9, `000081.84`) and
//!   Currency (10); text is left-aligned and space-padded. Trailer: a filler
//!   length (8 digits), that many spaces, then Last (`Test`). The
//!   length-prefixed filler is what lets a message of whole records reach an
//!   exact size.
//! * `hl7`: an HL7 v2 order (ORM^O01): MSH and PID segments, then per invoice an ORC
//!   segment (initials and surname as components of the ordering provider) and per item an
//!   OBR segment (codes as components, description, category, price, quantity), then per
//!   invoice an FT1 with the balance and currency, and a closing NTE `Test`; every segment
//!   ends with a carriage return.
//! * `swift`: a SWIFT MT543: blocks 1 to 3, then block 4 with a GENL sequence and per invoice
//!   a SETDET sequence (the surname and initials as a party, per item the codes and
//!   description as a two-line security, the category, quantity and price), the trailer
//!   `-}` and block 5. Lines end with CR LF.

use std::io::Write;

use super::Format;
use super::content::{Invoice, SaleList, json_money, money};

/// Width of the fixed layout's filler-length field.
pub const FIXED_FILLER_DIGITS: usize = 8;
const SOAP_START: &str = concat!(
    r#"<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/""#,
    r#" xmlns:soapenc="http://schemas.xmlsoap.org/soap/encoding/""#,
    r#" xmlns:xsd="http://www.w3.org/2001/XMLSchema""#,
    r#" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance""#,
    r#" xmlns:tns="http://WssSale.miwssoap.broker.mqst.ibm.com""#,
    r#" xmlns:wsa="http://www.w3.org/2005/08/addressing">"#,
    "<soapenv:Header><wsa:Action>SummerSale</wsa:Action>",
    "<wsa:MessageID>uuid:515704D6-0111-4000-E000-82267F000001</wsa:MessageID>",
    "</soapenv:Header><soapenv:Body><tns:SaleRequest><SaleEnvelope><Header><SaleListCount>",
);
const SOAP_END: &str = concat!(
    "<Trailer><CompletionTime>12.00.00</CompletionTime></Trailer></SaleEnvelope>",
    "</tns:SaleRequest></soapenv:Body></soapenv:Envelope>",
);

const HL7_START: &str = concat!(
    "MSH|^~\\&|SALES|STORE|ORDERS|HQ|20261128120000||ORM^O01|MSG00001|P|2.5\r",
    "PID|1||PAT0001^^^STORE||Sale^Summer\r",
);

const SWIFT_START: &str = concat!(
    "{1:F01BANKBEBBAXXX0000000000}{2:I543BANKDEFFXXXXN}{3:{108:SUMMERSALE}}{4:\r\n",
    ":16R:GENL\r\n:20C::SEME//1\r\n:23G:NEWM\r\n:98A::PREP//20261128\r\n:16S:GENL",
);

/// The boundary of the `swa` format's multipart body.
const SWA_BOUNDARY: &str = "SluiceBenchSwA";
/// The Content-Type an HTTP client sends with the `swa` format.
pub const SWA_CONTENT_TYPE: &str =
    "multipart/related; type=\"text/xml\"; start=\"<envelope>\"; boundary=\"SluiceBenchSwA\"";
const SWA_ENVELOPE: &str = concat!(
    "<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\"",
    " xmlns:tns=\"http://WssSale.miwssoap.broker.mqst.ibm.com\"><soapenv:Body><tns:SaleRequest>",
    "<SaleEnvelope><Header><SaleListCount>1</SaleListCount></Header><SaleList/>",
    "<Trailer><CompletionTime>12.00.00</CompletionTime></Trailer></SaleEnvelope>",
    "</tns:SaleRequest></soapenv:Body></soapenv:Envelope>",
);

/// Writes the envelope start for a message of `count` repetitions.
pub fn write_start(format: Format, count: usize, out: &mut Vec<u8>) {
    match format {
        Format::Xml => out.extend_from_slice(b"<Parent><First>1</First>"),
        Format::Swa => {
            push_fmt(
                out,
                format_args!(
                    "--{SWA_BOUNDARY}\r\nContent-Type: text/xml; charset=utf-8\r\nContent-ID: <envelope>\r\n\r\n{SWA_ENVELOPE}\r\n\
                     --{SWA_BOUNDARY}\r\nContent-Type: application/xml\r\nContent-ID: <salelist>\r\n\r\n"
                ),
            );
            out.extend_from_slice(b"<Parent><First>1</First>");
        }
        Format::Soap => {
            out.extend_from_slice(SOAP_START.as_bytes());
            push_fmt(out, format_args!("{count}</SaleListCount></Header>"));
        }
        Format::Json => out.extend_from_slice(br#"{"Parent":{"First":1,"SaleList":["#),
        Format::Delimited => out.extend_from_slice(b"1\n"),
        Format::Fixed => push_fmt(out, format_args!("{:04}{:08}", 1, count)),
        Format::Hl7 => out.extend_from_slice(HL7_START.as_bytes()),
        Format::Swift => out.extend_from_slice(SWIFT_START.as_bytes()),
    }
}

/// Writes the envelope end; `filler` bytes are added for the fixed layout
/// only (the text formats grow their descriptions instead).
pub fn write_end(format: Format, filler: usize, out: &mut Vec<u8>) {
    match format {
        Format::Xml => out.extend_from_slice(b"<Last>Test</Last></Parent>"),
        Format::Swa => {
            out.extend_from_slice(b"<Last>Test</Last></Parent>");
            push_fmt(out, format_args!("\r\n--{SWA_BOUNDARY}--\r\n"));
        }
        Format::Soap => out.extend_from_slice(SOAP_END.as_bytes()),
        Format::Json => out.extend_from_slice(br#"],"Last":"Test"}}"#),
        Format::Delimited => out.extend_from_slice(b"Test\n"),
        Format::Hl7 => out.extend_from_slice(b"NTE|1||Test\r"),
        Format::Swift => out.extend_from_slice(b"\r\n:70E::SPRO//Test\r\n-}{5:{CHK:123456789ABC}}"),
        Format::Fixed => {
            push_fmt(
                out,
                format_args!("{filler:0width$}", width = FIXED_FILLER_DIGITS),
            );
            out.resize(out.len() + filler, b' ');
            out.extend_from_slice(b"Test");
        }
    }
}

/// Writes repetition `index` (the first is 0; JSON needs a comma before the others).
pub fn write_sale_list(format: Format, index: usize, list: &SaleList, out: &mut Vec<u8>) {
    match format {
        Format::Xml | Format::Soap | Format::Swa => {
            out.extend_from_slice(b"<SaleList>");
            for invoice in &list.invoices {
                xml_invoice(invoice, out);
            }
            out.extend_from_slice(b"</SaleList>");
        }
        Format::Json => {
            if index > 0 {
                out.push(b',');
            }
            out.extend_from_slice(br#"{"Invoice":["#);
            for (i, invoice) in list.invoices.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                json_invoice(invoice, out);
            }
            out.extend_from_slice(b"]}");
        }
        Format::Delimited => {
            for (i, invoice) in list.invoices.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                delimited_invoice(invoice, out);
            }
            out.push(b'\n');
        }
        Format::Fixed => {
            for invoice in &list.invoices {
                fixed_invoice(invoice, out);
            }
        }
        Format::Hl7 => {
            for invoice in &list.invoices {
                hl7_invoice(index, invoice, out);
            }
        }
        Format::Swift => {
            for invoice in &list.invoices {
                swift_invoice(invoice, out);
            }
        }
    }
}

fn swift_invoice(invoice: &Invoice, out: &mut Vec<u8>) {
    let [a, b] = invoice.initials;
    push_fmt(
        out,
        format_args!("\r\n:16R:SETDET\r\n:95Q::BUYR//{} {a} {b}", invoice.surname),
    );
    for item in &invoice.items {
        let [c1, c2, c3] = item.codes;
        push_fmt(
            out,
            format_args!(
                "\r\n:35B:ISIN XS{c1:02}{c2:02}{c3:02}\r\n{}\r\n:22F::CATG//{}\r\n:36B::SETT//UNIT/{:02}\r\n:90B::DEAL//ACTU/{}",
                item.description,
                item.category,
                item.quantity,
                money(item.price_cents)
            ),
        );
    }
    push_fmt(
        out,
        format_args!(
            "\r\n:19A::SETT//{}{}\r\n:16S:SETDET",
            invoice.currency,
            money(invoice.balance_cents)
        ),
    );
}

fn hl7_invoice(index: usize, invoice: &Invoice, out: &mut Vec<u8>) {
    let [a, b] = invoice.initials;
    push_fmt(
        out,
        format_args!("ORC|NW|{index}||||||||||{}^{a}^{b}\r", invoice.surname),
    );
    for (i, item) in invoice.items.iter().enumerate() {
        let [c1, c2, c3] = item.codes;
        push_fmt(
            out,
            format_args!(
                "OBR|{}||{index}|{c1:02}^{c2:02}^{c3:02}|{}|{}|{}|{:02}\r",
                i + 1,
                item.description,
                item.category,
                money(item.price_cents),
                item.quantity
            ),
        );
    }
    push_fmt(
        out,
        format_args!(
            "FT1|{index}|||||{}^{}\r",
            money(invoice.balance_cents),
            invoice.currency
        ),
    );
}

fn push_fmt(out: &mut Vec<u8>, args: std::fmt::Arguments<'_>) {
    // Writing into a Vec cannot fail.
    let _ = out.write_fmt(args);
}

fn xml_invoice(invoice: &Invoice, out: &mut Vec<u8>) {
    let [a, b] = invoice.initials;
    push_fmt(
        out,
        format_args!(
            "<Invoice><Initial>{a}</Initial><Initial>{b}</Initial><Surname>{}</Surname>",
            invoice.surname
        ),
    );
    for item in &invoice.items {
        let [c1, c2, c3] = item.codes;
        push_fmt(
            out,
            format_args!(
                "<Item><Code>{c1:02}</Code><Code>{c2:02}</Code><Code>{c3:02}</Code>\
                 <Description>{}</Description><Category>{}</Category>\
                 <Price>{}</Price><Quantity>{:02}</Quantity></Item>",
                item.description,
                item.category,
                money(item.price_cents),
                item.quantity
            ),
        );
    }
    push_fmt(
        out,
        format_args!(
            "<Balance>{}</Balance><Currency>{}</Currency></Invoice>",
            money(invoice.balance_cents),
            invoice.currency
        ),
    );
}

fn json_invoice(invoice: &Invoice, out: &mut Vec<u8>) {
    let [a, b] = invoice.initials;
    push_fmt(
        out,
        format_args!(
            r#"{{"Initial":["{a}","{b}"],"Surname":"{}","Item":["#,
            invoice.surname
        ),
    );
    for (i, item) in invoice.items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let [c1, c2, c3] = item.codes;
        push_fmt(
            out,
            format_args!(
                r#"{{"Code":["{c1:02}","{c2:02}","{c3:02}"],"Description":"{}","Category":"{}","Price":{},"Quantity":{}}}"#,
                item.description,
                item.category,
                json_money(item.price_cents),
                item.quantity
            ),
        );
    }
    push_fmt(
        out,
        format_args!(
            r#"],"Balance":{},"Currency":"{}"}}"#,
            json_money(invoice.balance_cents),
            invoice.currency
        ),
    );
}

fn delimited_invoice(invoice: &Invoice, out: &mut Vec<u8>) {
    let [a, b] = invoice.initials;
    push_fmt(out, format_args!("{a},{b},{}", invoice.surname));
    for item in &invoice.items {
        let [c1, c2, c3] = item.codes;
        push_fmt(
            out,
            format_args!(
                ",{c1:02},{c2:02},{c3:02},{},{},{},{:02}",
                item.description,
                item.category,
                money(item.price_cents),
                item.quantity
            ),
        );
    }
    push_fmt(
        out,
        format_args!(",{},{}", money(invoice.balance_cents), invoice.currency),
    );
}

fn fixed_invoice(invoice: &Invoice, out: &mut Vec<u8>) {
    let [a, b] = invoice.initials;
    push_fmt(out, format_args!("{a}{b}{:<20.20}", invoice.surname));
    for item in &invoice.items {
        let [c1, c2, c3] = item.codes;
        push_fmt(
            out,
            format_args!(
                "{c1:02}{c2:02}{c3:02}{:<30.30}{:<20.20}{:0>6}{:02}",
                item.description,
                item.category,
                money(item.price_cents),
                item.quantity
            ),
        );
    }
    push_fmt(
        out,
        format_args!(
            "{:0>9}{:<10.10}",
            money(invoice.balance_cents),
            invoice.currency
        ),
    );
}

/// The length of one fixed-layout SaleList record.
pub const FIXED_RECORD_LEN: usize = 2 * (2 + 20 + 2 * (6 + 30 + 20 + 6 + 2) + 9 + 10);

#[cfg(test)]
mod tests {
    use super::super::content::seed_sale_list;
    use super::*;

    #[test]
    fn xml_sale_list_matches_the_seed_text() {
        let mut out = Vec::new();
        write_sale_list(Format::Xml, 0, &seed_sale_list(), &mut out);
        let text = String::from_utf8(out).unwrap_or_default();
        assert!(text.starts_with(
            "<SaleList><Invoice><Initial>K</Initial><Initial>A</Initial><Surname>Braithwaite</Surname>\
             <Item><Code>00</Code><Code>01</Code><Code>02</Code><Description>Twister</Description>\
             <Category>Games</Category><Price>00.30</Price><Quantity>01</Quantity></Item>"
        ));
        assert!(
            text.ends_with(
                "<Balance>81.84</Balance><Currency>Euros</Currency></Invoice></SaleList>"
            )
        );
    }

    #[test]
    fn fixed_record_has_the_documented_length() {
        let mut out = Vec::new();
        write_sale_list(Format::Fixed, 0, &seed_sale_list(), &mut out);
        assert_eq!(out.len(), FIXED_RECORD_LEN);
    }

    #[test]
    fn delimited_line_has_38_fields() {
        let mut out = Vec::new();
        write_sale_list(Format::Delimited, 0, &seed_sale_list(), &mut out);
        let line = String::from_utf8(out).unwrap_or_default();
        assert_eq!(line.trim_end().split(',').count(), 38);
    }
}
