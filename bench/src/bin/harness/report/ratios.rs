//! Ratios of medians: each plugboard build against the other clients (wall and CPU time), the
//! app's memory against the hello-world floor app's, `plugboard health` against single
//! probes, and the gateway against a direct connection, 20 relays and FastMCP's proxy.

use std::collections::BTreeMap;

use crate::row::Row;

pub struct Ratio {
    pub section: &'static str,
    pub subject: String,
    /// `A / B`, with what is compared where it is not wall time (`… (CPU time)`).
    pub name: String,
    pub value: f64,
}

/// Medians by (section, subject, client).
type Medians<'a> = BTreeMap<(&'a str, &'a str, &'a str), f64>;

pub fn ratios(rows: &[Row]) -> Vec<Ratio> {
    let wall: Medians = medians(rows, Row::median_ms);
    let cpu: Medians = medians(rows, Row::cpu_median_ms);
    let mut out = client_ratios(rows, &wall, &cpu);
    out.extend(app_memory_ratios(rows));
    out.extend(health_ratios(&wall));
    out.extend(gateway_ratios(rows, &wall));
    out
}

fn medians<'a>(rows: &'a [Row], median: fn(&Row) -> Option<f64>) -> Medians<'a> {
    rows.iter()
        .filter_map(|row| {
            median(row).map(|m| ((row.section, row.subject.as_str(), row.client.as_str()), m))
        })
        .collect()
}

/// In the connection sections, each plugboard build against the floor (wall and CPU time),
/// the MCP Inspector and the Python SDK on the same server.
fn client_ratios(rows: &[Row], wall: &Medians, cpu: &Medians) -> Vec<Ratio> {
    let mut out = vec![];
    for row in rows {
        if !matches!(row.section, "stdio" | "http") || !row.client.starts_with("plugboard") {
            continue;
        }
        let Some(mine) = row.median_ms() else {
            continue;
        };
        let ratio = |name: String, value: f64| Ratio {
            section: row.section,
            subject: row.subject.clone(),
            name,
            value,
        };
        if let (Some(my_cpu), Some(floor_cpu)) = (
            row.cpu_median_ms(),
            cpu.get(&(row.section, row.subject.as_str(), "floor")),
        ) {
            out.push(ratio(
                format!("{} / floor (CPU time)", row.client),
                my_cpu / floor_cpu,
            ));
        }
        for other in ["floor", "inspector", "python-sdk"] {
            if let Some(theirs) = wall.get(&(row.section, row.subject.as_str(), other)) {
                out.push(ratio(format!("{} / {other}", row.client), mine / theirs));
            }
        }
    }
    out
}

/// The app's memory against the floor app's (PSS, medians of the runs).
fn app_memory_ratios(rows: &[Row]) -> Vec<Ratio> {
    let Some(floor) = rows
        .iter()
        .find(|r| r.client == "floor-app" && r.subject.contains("PSS"))
        .and_then(Row::median_mib)
    else {
        return vec![];
    };
    rows.iter()
        .filter(|r| r.section == "app" && r.client == "plugboard-app" && r.subject.contains("PSS"))
        .filter_map(|row| {
            row.median_mib().map(|mine| Ratio {
                section: "app",
                subject: row.subject.clone(),
                name: "app / hello-world floor (PSS)".into(),
                value: mine / floor,
            })
        })
        .collect()
}

/// `plugboard health` over 100 servers against the slowest single probe and their sum.
fn health_ratios(wall: &Medians) -> Vec<Ratio> {
    let health = |client: &str| wall.get(&("health", "100 servers", client)).copied();
    let Some(h) = health("plugboard health default") else {
        return vec![];
    };
    [
        ("health / slowest single probe", "slowest single probe"),
        ("health / sum of single probes", "sum of single probes"),
    ]
    .into_iter()
    .filter_map(|(name, other)| {
        health(other).map(|o| Ratio {
            section: "health",
            subject: "100 servers".into(),
            name: name.into(),
            value: h / o,
        })
    })
    .collect()
}

/// The gateway: its calls and first list against the floor and FastMCP's proxy (wall time),
/// its memory against 20 relays and the proxy's.
fn gateway_ratios(rows: &[Row], wall: &Medians) -> Vec<Ratio> {
    let mut out = vec![];
    for row in rows.iter().filter(|r| r.section == "gateway") {
        let ratio = |name: String, value: f64| Ratio {
            section: "gateway",
            subject: row.subject.clone(),
            name,
            value,
        };
        if row.client.starts_with("plugboard serve")
            && let Some(mine) = row.median_ms()
        {
            for (other, theirs) in wall
                .iter()
                .filter(|((s, subject, c), _)| {
                    *s == "gateway" && *subject == row.subject && !c.starts_with("plugboard")
                })
                .map(|((_, _, c), m)| (c, m))
            {
                out.push(ratio(format!("{} / {other}", row.client), mine / theirs));
            }
            // With a hanging member, against the same gateway without it.
            for alone in [
                "plugboard serve (the 19 alone)",
                "plugboard serve (the healthy alone)",
            ] {
                if row.client == "plugboard serve"
                    && let Some(theirs) = wall.get(&("gateway", row.subject.as_str(), alone))
                {
                    out.push(ratio(format!("{} / {alone}", row.client), mine / theirs));
                }
            }
        }
        if row.client == "plugboard serve"
            && let Some(mine) = row.median_mib()
        {
            for other in rows.iter().filter(|r| {
                r.section == "gateway" && r.subject == row.subject && r.client != row.client
            }) {
                if let Some(theirs) = other.median_mib() {
                    out.push(ratio(
                        format!("{} / {} (memory)", row.client, other.client),
                        mine / theirs,
                    ));
                }
            }
        }
    }
    out
}
