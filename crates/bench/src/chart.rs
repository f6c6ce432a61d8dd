//! SVG charts of scaling runs: message rate and CPU per message against the
//! number of flow instances, like the seeds' "Growing message throughput"
//! tables. Written by hand — two polylines and their axes need no library.

use std::fmt::Write as _;

use crate::report::ReportRow;

/// One chart, ready to write.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Caption.
    pub title: String,
    /// A file name derived from the test (`scaling-xml-echo-2kB-NONE.svg`).
    pub file_name: String,
    /// The SVG document.
    pub svg: String,
}

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 360.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 70.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;

/// One chart per scaling test (same test, size and persistence; instances
/// varied), with at least one measured point.
pub fn scaling_charts(rows: &[ReportRow]) -> Vec<Chart> {
    let mut groups: Vec<(String, Vec<&ReportRow>)> = Vec::new();
    for row in rows.iter().filter(|r| r.scaling) {
        let key = format!("{} {} {}", row.test, row.msg_size, row.persistent);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(row),
            None => groups.push((key, vec![row])),
        }
    }
    groups
        .into_iter()
        .filter_map(|(title, mut members)| {
            members.sort_by_key(|r| r.instances);
            chart(&title, &members)
        })
        .collect()
}

fn chart(title: &str, rows: &[&ReportRow]) -> Option<Chart> {
    let use_ms = rows
        .iter()
        .any(|r| r.median().and_then(|m| m.cpu_ms_per_msg).is_some());
    let points: Vec<(f64, f64, Option<f64>)> = rows
        .iter()
        .filter_map(|r| {
            let m = r.median()?;
            let cpu = if use_ms {
                m.cpu_ms_per_msg
            } else {
                m.server_cpu_us_per_msg
            };
            Some((f64::from(r.instances?), m.rate, cpu))
        })
        .collect();
    if points.is_empty() {
        return None;
    }
    let x_max = points.iter().map(|p| p.0).fold(1.0, f64::max);
    let rate_max = nice_max(points.iter().map(|p| p.1).fold(0.0, f64::max));
    let cpu_max = nice_max(points.iter().filter_map(|p| p.2).fold(0.0, f64::max));
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x = |v: f64| {
        LEFT + if x_max > 1.0 {
            (v - 1.0) / (x_max - 1.0)
        } else {
            0.5
        } * plot_w
    };
    let y = |v: f64, max: f64| TOP + plot_h - (v / max) * plot_h;
    let cpu_label = if use_ms {
        "CPU ms/msg"
    } else {
        "Server CPU µs/msg"
    };

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
        WIDTH / 2.0,
        escape(title)
    );
    // Axes and gridlines: four steps on each y axis.
    for step in 0..=4 {
        let f = f64::from(step) / 4.0;
        let gy = TOP + plot_h - f * plot_h;
        let _ = writeln!(
            svg,
            "<line x1=\"{LEFT}\" y1=\"{gy:.1}\" x2=\"{:.1}\" y2=\"{gy:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#1f77b4\">{}</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" fill=\"#d62728\">{}</text>",
            LEFT + plot_w,
            LEFT - 6.0,
            gy + 4.0,
            short(rate_max * f),
            LEFT + plot_w + 6.0,
            gy + 4.0,
            short(cpu_max * f)
        );
    }
    for p in &points {
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x(p.0),
            TOP + plot_h + 18.0,
            p.0
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">Instances</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 10.0
    );
    let _ = writeln!(
        svg,
        "<text x=\"14\" y=\"{:.1}\" fill=\"#1f77b4\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">Message Rate (msg/s)</text>",
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    let rx = WIDTH - 14.0;
    let _ = writeln!(
        svg,
        "<text x=\"{rx}\" y=\"{:.1}\" fill=\"#d62728\" transform=\"rotate(90 {rx} {:.1})\" text-anchor=\"middle\">{cpu_label}</text>",
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    let rate_line: Vec<String> = points
        .iter()
        .map(|p| format!("{:.1},{:.1}", x(p.0), y(p.1, rate_max)))
        .collect();
    let cpu_line: Vec<String> = points
        .iter()
        .filter_map(|p| p.2.map(|c| format!("{:.1},{:.1}", x(p.0), y(c, cpu_max))))
        .collect();
    let _ = writeln!(
        svg,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\"/>",
        rate_line.join(" ")
    );
    if !cpu_line.is_empty() {
        let _ = writeln!(
            svg,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\" stroke-dasharray=\"6 3\"/>",
            cpu_line.join(" ")
        );
    }
    svg.push_str("</svg>\n");
    let file_name = format!(
        "scaling-{}.svg",
        title
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect::<String>()
    );
    Some(Chart {
        title: format!("{title}: rate and {cpu_label} against instances"),
        file_name,
        svg,
    })
}

/// Rounds an axis maximum up to 1, 2 or 5 × a power of ten.
fn nice_max(v: f64) -> f64 {
    if !(v.is_finite() && v > 0.0) {
        return 1.0;
    }
    let power = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&c| c >= v)
        .unwrap_or(10.0 * power)
}

fn short(v: f64) -> String {
    if v >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_max_rounds_up_to_1_2_5() {
        assert_eq!(nice_max(730.0), 1000.0);
        assert_eq!(nice_max(0.7), 1.0);
        assert_eq!(nice_max(1.3), 2.0);
        assert_eq!(nice_max(4100.0), 5000.0);
        assert_eq!(nice_max(0.0), 1.0);
    }
}
