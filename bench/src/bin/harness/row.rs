//! One line of the results: a measured thing (section, subject, client) with its samples, wall
//! and CPU times or sizes in MiB, and the medians the report is made of.

use std::time::Duration;

pub struct Row {
    pub section: &'static str,
    pub subject: String,
    pub client: String,
    pub samples: Vec<Duration>,
    /// CPU time (user + system) of each sample, where measured.
    pub cpu: Vec<Duration>,
    /// Rows that are not times: sizes in MiB.
    pub mib: Vec<f64>,
    pub note: String,
}

impl Row {
    /// A row of wall times.
    pub fn times(
        section: &'static str,
        subject: impl Into<String>,
        client: impl Into<String>,
        samples: Vec<Duration>,
        note: impl Into<String>,
    ) -> Row {
        Row {
            section,
            subject: subject.into(),
            client: client.into(),
            samples,
            cpu: vec![],
            mib: vec![],
            note: note.into(),
        }
    }

    /// A row of sizes in MiB.
    pub fn sizes(
        section: &'static str,
        subject: impl Into<String>,
        client: impl Into<String>,
        mib: Vec<f64>,
        note: impl Into<String>,
    ) -> Row {
        Row {
            mib,
            ..Row::times(section, subject, client, vec![], note)
        }
    }

    pub fn sorted_ms(&self) -> Vec<f64> {
        sorted_ms(&self.samples)
    }

    pub fn median_ms(&self) -> Option<f64> {
        median(&self.sorted_ms())
    }

    pub fn cpu_median_ms(&self) -> Option<f64> {
        median(&sorted_ms(&self.cpu))
    }

    pub fn sorted_mib(&self) -> Vec<f64> {
        let mut mib = self.mib.clone();
        mib.sort_by(f64::total_cmp);
        mib
    }

    pub fn median_mib(&self) -> Option<f64> {
        median(&self.sorted_mib())
    }
}

fn sorted_ms(durations: &[Duration]) -> Vec<f64> {
    let mut ms: Vec<f64> = durations.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    ms
}

/// The median of sorted values; none of none.
pub fn median(sorted: &[f64]) -> Option<f64> {
    match sorted.len() {
        0 => None,
        n if n % 2 == 1 => Some(sorted[n / 2]),
        n => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}
