//! Charts of the experiments, drawn as SVG with plotters.
//!
//! Text needs a TrueType font; the first of a list of common system fonts is used
//! (Debian/Ubuntu: `fonts-dejavu-core`). Without one, charts are skipped with a message
//! and the tables, CSV and JSON are still written.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use plotters::prelude::*;

use crate::handlers::HandlersReport;
use crate::lifecycle::{LifecycleReport, Step};

const FONTS: [&str; 6] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
];

/// Registers a system font as plotters' `sans-serif`, once.
fn font() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            let path = std::env::var("OSPREY_CHART_FONT")
                .ok()
                .into_iter()
                .chain(FONTS.iter().map(|s| (*s).to_owned()))
                .find(|p| Path::new(p).exists())
                .ok_or_else(|| {
                    "no TrueType font found (install fonts-dejavu-core, or set OSPREY_CHART_FONT)"
                        .to_owned()
                })?;
            let bytes = std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?;
            // plotters keeps fonts for the life of the process.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
                .map_err(|_| format!("{path} is not a usable TrueType font"))
        })
        .clone()
}

type Series = Vec<(String, Vec<(f64, f64)>)>;

/// A tick label: three significant digits at most, no trailing zeros.
fn short(y: f64) -> String {
    let digits = (2 - y.abs().log10().floor() as i32).clamp(0, 6) as usize;
    let s = format!("{y:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    x_label: &str,
    series: &Series,
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let ys = series.iter().flat_map(|(_, p)| p.iter().map(|&(_, y)| y));
    let (lo, hi) = ys.fold((f64::MAX, f64::MIN), |(lo, hi), y| (lo.min(y), hi.max(y)));
    if lo > hi {
        return Ok(());
    }
    let x_max = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|&(x, _)| x))
        .fold(1.0, f64::max);
    // At least a decade and a half, so that the log axis has labelled ticks.
    let (lo, hi) = ((lo * 0.5).min(hi / 30.0).max(1e-4), hi * 2.0);
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(0.5f64..x_max + 0.5, (lo..hi).log_scale())
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc("latency (ms, log scale)")
        .x_labels((x_max as usize).min(12))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| short(*y))
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (name, points)) in series.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                colour.stroke_width(2),
            ))
            .map_err(|e| err(&e))?
            .label(name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2))
            });
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(|e| err(&e))?;
    Ok(())
}

/// By client: one series per client over resources 1..=R.
fn per_client(means: &BTreeMap<(usize, usize, usize), f64>) -> Series {
    let mut by: BTreeMap<usize, Vec<(f64, f64)>> = BTreeMap::new();
    for (&(k, r, _), &v) in means {
        by.entry(k).or_default().push((r as f64, v));
    }
    by.into_iter()
        .map(|(k, p)| (format!("client {k}"), p))
        .collect()
}

/// Figures 2-4 of the paper for `report`, side by side, as SVG (or PNG when `path`
/// ends in `.png`).
///
/// # Errors
/// No font, or the file cannot be written.
pub fn lifecycle_chart(report: &LifecycleReport, path: &Path) -> Result<(), String> {
    font()?;
    let setup_steps = [
        Step::ClientSetup,
        Step::Create,
        Step::PrepareSubscription,
        Step::Subscribe,
    ];
    let fig2 = per_client(&report.mean_by(|s| setup_steps.contains(&s.step)));
    let fig3 = per_client(&report.mean_by(|s| s.step == Step::Add && s.add == Some(1)));
    let adds = report.shape[3].max(1);
    let client0 = |step: Step| {
        report
            .mean_by(|s| s.step == step && s.client == 0)
            .into_iter()
            .map(|((_, r, a), v)| (((r - 1) * adds + a) as f64, v))
            .collect::<Vec<_>>()
    };
    let fig4: Series = vec![
        ("add".to_owned(), client0(Step::Add)),
        ("notification".to_owned(), client0(Step::Notification)),
    ];
    let figures = [
        (
            "Fig. 2: resource set-up (create + subscribe)",
            "resource",
            &fig2,
        ),
        ("Fig. 3: first add on each resource", "resource", &fig3),
        (
            "Fig. 4: all adds of client 0",
            "request (resource x add)",
            &fig4,
        ),
    ];
    let size = (1500, 480);
    if path.extension().is_some_and(|e| e == "png") {
        draw(BitMapBackend::new(path, size).into_drawing_area(), &figures)
    } else {
        draw(SVGBackend::new(path, size).into_drawing_area(), &figures)
    }
}

/// Panels side by side: (title, x axis label, series) each.
fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    figures: &[(&str, &str, &Series)],
) -> Result<(), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let panels = root.split_evenly((1, figures.len()));
    for (area, (title, x_label, series)) in panels.iter().zip(figures) {
        panel(area, title, x_label, series)?;
    }
    root.present().map_err(|e| e.to_string())
}

/// The handler experiment's figures: request round trip against the number of handlers,
/// in process and distributed (the paper's Figures 4-6), and the overhead per handler
/// against the raw NATS round trip. SVG, or PNG when `path` ends in `.png`.
///
/// # Errors
/// No font, or the file cannot be written.
pub fn handlers_chart(report: &HandlersReport, path: &Path) -> Result<(), String> {
    font()?;
    #[allow(clippy::cast_precision_loss)]
    let xs: Vec<f64> = report.steps.iter().map(|s| s.handlers as f64).collect();
    let line = |f: &dyn Fn(&crate::handlers::Step) -> f64| -> Vec<(f64, f64)> {
        xs.iter().copied().zip(report.steps.iter().map(f)).collect()
    };
    let times: Series = vec![
        ("local chain".into(), line(&|s| s.local.mean)),
        (
            "distributed, sequential".into(),
            line(&|s| s.distributed.mean),
        ),
        ("distributed, chained".into(), line(&|s| s.chained.mean)),
    ];
    let rtt = report.nats_round_trip.mean;
    let overheads: Series = vec![
        (
            "overhead per handler (means)".into(),
            line(&|s| s.overhead_ms.max(1e-4)),
        ),
        (
            "overhead per handler (medians)".into(),
            line(&|s| s.overhead_p50_ms.max(1e-4)),
        ),
        (
            "chained overhead per handler".into(),
            line(&|s| s.chained_overhead_ms.max(1e-4)),
        ),
        ("raw NATS round trip, 4 KB".into(), line(&|_| rtt)),
    ];
    let figures = [
        (
            "Request round trip: local chain vs distributed",
            "handlers in the chain",
            &times,
        ),
        (
            "Overhead per distributed handler",
            "handlers in the chain",
            &overheads,
        ),
    ];
    let size = (1120, 440);
    if path.extension().is_some_and(|e| e == "png") {
        draw(BitMapBackend::new(path, size).into_drawing_area(), &figures)
    } else {
        draw(SVGBackend::new(path, size).into_drawing_area(), &figures)
    }
}
