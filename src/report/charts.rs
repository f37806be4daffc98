//! The report's charts, drawn by plotters' SVG backend: per class, both arms' accuracy as
//! paired bars beside the contribution's interval as a whisker around a zero line; and
//! each class's cost against its contribution.
//!
//! Invariant: a bar's length is the accuracy in results.json and nothing else (the test
//! parses the SVG back); the palette is Okabe–Ito, safe for colour-blind readers, and the
//! ink and grid colours are fixed values the page's stylesheet re-colours for dark mode.

use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::ReportError;
use super::model::ClassRow;
use crate::battery::results::ResultsDoc;

/// Okabe–Ito orange: the baseline.
pub const BASELINE: RGBColor = RGBColor(0xE6, 0x9F, 0x00);
/// Okabe–Ito blue: the investigator.
pub const INVESTIGATOR: RGBColor = RGBColor(0x00, 0x72, 0xB2);
/// Text, axes, whiskers (the stylesheet maps it to the theme's ink).
pub const INK: RGBColor = RGBColor(0x33, 0x33, 0x33);
/// Grid and separators (mapped to the theme's rule colour).
pub const GRID: RGBColor = RGBColor(0xCC, 0xCC, 0xCC);

pub const WIDTH: u32 = 960;
const ROW_PX: u32 = 40;
const FONT: &str = "sans-serif";

fn chart_error(chart: &'static str, e: impl std::fmt::Display) -> ReportError {
    ReportError::Chart {
        chart,
        message: e.to_string(),
    }
}

fn text_style(size: u32) -> TextStyle<'static> {
    (FONT, size).into_font().color(&INK)
}

/// Rows top to bottom: row `i` is centred at `rows - i - 0.5`.
fn centre(i: usize, rows: usize) -> f64 {
    rows as f64 - i as f64 - 0.5
}

/// The class axis: continuous `0..rows`, its ticks at the row centres (so each label sits
/// beside its bars).
struct Rows(usize);

impl Ranged for Rows {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let share = if self.0 == 0 { 0.0 } else { v / self.0 as f64 };
        limit.0 + (f64::from(limit.1 - limit.0) * share).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, _: H) -> Vec<f64> {
        (0..self.0).map(|i| centre(i, self.0)).collect()
    }

    fn range(&self) -> Range<f64> {
        0.0..self.0 as f64
    }
}

fn row_name(rows: &[ClassRow], v: f64) -> String {
    let n = rows.len();
    let from_top = n as f64 - v;
    if from_top < 0.0 {
        return String::new();
    }
    rows.get(from_top.floor() as usize)
        .map_or(String::new(), |r| {
            format!("{}{}", r.class, if r.underpowered { " †" } else { "" })
        })
}

fn accuracy_panel(
    area: &DrawingArea<SVGBackend, Shift>,
    rows: &[ClassRow],
) -> Result<(), ReportError> {
    let e = |e| chart_error("accuracy", e);
    let n = rows.len();
    let mut chart = ChartBuilder::on(area)
        .margin_top(12)
        .margin_right(20)
        .x_label_area_size(44)
        .y_label_area_size(190)
        // Past 100% only to leave room for the value at a full bar's end.
        .build_cartesian_2d(0f64..114f64, Rows(n))
        .map_err(e)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_labels(7)
        .x_label_formatter(&|v| {
            if *v <= 100.0 {
                format!("{v:.0}%")
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|v| row_name(rows, *v))
        .x_desc("accuracy")
        .axis_style(INK)
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .label_style(text_style(16))
        .axis_desc_style(text_style(16))
        .draw()
        .map_err(e)?;
    let mut bars = Vec::new();
    let mut values = Vec::new();
    let value_style = text_style(14).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, r) in rows.iter().enumerate() {
        let c = centre(i, n);
        for (acc, y0, y1, colour) in [
            (r.baseline_accuracy, c + 0.04, c + 0.36, BASELINE),
            (r.investigator_accuracy, c - 0.36, c - 0.04, INVESTIGATOR),
        ] {
            if let Some(a) = acc {
                bars.push(Rectangle::new(
                    [(0.0, y0), (a * 100.0, y1)],
                    colour.filled(),
                ));
                values.push(Text::new(
                    format!("{:.0}%", a * 100.0),
                    (a * 100.0 + 1.0, f64::midpoint(y0, y1)),
                    value_style.clone(),
                ));
            }
        }
    }
    chart.draw_series(bars).map_err(e)?;
    chart.draw_series(values).map_err(e)?;
    if rows.last().is_some_and(|r| r.overall) && n > 1 {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(0.0, 1.0), (114.0, 1.0)],
                INK.stroke_width(1),
            )))
            .map_err(e)?;
    }
    Ok(())
}

/// A horizontal interval from `x0` to `x1` at height `y`, with end caps.
fn whisker(x0: f64, x1: f64, y: f64) -> [PathElement<(f64, f64)>; 3] {
    let style = INK.stroke_width(2);
    [
        PathElement::new(vec![(x0, y), (x1, y)], style),
        PathElement::new(vec![(x0, y - 0.18), (x0, y + 0.18)], style),
        PathElement::new(vec![(x1, y - 0.18), (x1, y + 0.18)], style),
    ]
}

fn contribution_panel(
    area: &DrawingArea<SVGBackend, Shift>,
    rows: &[ClassRow],
    doc: &ResultsDoc,
) -> Result<(), ReportError> {
    let e = |e| chart_error("contribution", e);
    let n = rows.len();
    let mut chart = ChartBuilder::on(area)
        .margin_top(12)
        .margin_left(16)
        .margin_right(24)
        .x_label_area_size(44)
        .y_label_area_size(0)
        .build_cartesian_2d(-100f64..100f64, Rows(n))
        .map_err(e)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_labels(5)
        .x_label_formatter(&|v| super::model::points(v / 100.0))
        .x_desc("contribution, points [95% CI]")
        .axis_style(INK)
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .label_style(text_style(16))
        .axis_desc_style(text_style(16))
        .draw()
        .map_err(e)?;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(0.0, 0.0), (0.0, n as f64)],
            INK.stroke_width(1),
        )))
        .map_err(e)?;
    if rows.last().is_some_and(|r| r.overall) && n > 1 {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(-100.0, 1.0), (100.0, 1.0)],
                INK.stroke_width(1),
            )))
            .map_err(e)?;
    }
    let summaries = doc.classes.iter().chain(std::iter::once(&doc.overall));
    for (i, c) in summaries.enumerate() {
        let Some(k) = &c.contribution else { continue };
        let y = centre(i, n);
        chart
            .draw_series(whisker(k.low * 100.0, k.high * 100.0, y))
            .map_err(e)?;
        let marker = if k.significant {
            Circle::new((k.estimate * 100.0, y), 6, INK.filled())
        } else {
            Circle::new((k.estimate * 100.0, y), 6, INK.stroke_width(2))
        };
        chart.draw_series(std::iter::once(marker)).map_err(e)?;
    }
    Ok(())
}

/// Paired accuracy bars (baseline above, investigator below) per class, with the
/// contribution's interval to the right.
///
/// # Errors
///
/// [`ReportError::Chart`] when the chart cannot be drawn.
pub fn accuracy(doc: &ResultsDoc, rows: &[ClassRow]) -> Result<String, ReportError> {
    let height = 64 + ROW_PX * rows.len() as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        let (left, right) = root.split_horizontally(560);
        accuracy_panel(&left, rows)?;
        contribution_panel(&right, rows, doc)?;
        root.present().map_err(|e| chart_error("accuracy", e))?;
    }
    Ok(svg)
}

/// What the cost axis measures: dollars when a model was paid, else tokens, else time.
fn cost_axis(doc: &ResultsDoc) -> (&'static str, Vec<f64>) {
    let inv = doc.manifest.investigator.arm.as_str();
    let arm = |f: fn(&crate::battery::summary::ArmSummary) -> f64| -> Vec<f64> {
        doc.classes
            .iter()
            .map(|c| c.arms.get(inv).map_or(0.0, f))
            .collect()
    };
    let dollars = arm(|a| a.total_cost_usd);
    if dollars.iter().any(|&x| x > 0.0) {
        return ("investigator cost per class, USD", dollars);
    }
    let tokens = arm(|a| a.mean_tokens_in + a.mean_tokens_out);
    if tokens.iter().any(|&x| x > 0.0) {
        return ("investigator tokens per trial (no spend recorded)", tokens);
    }
    (
        "investigator wall time per trial, s (no spend or tokens recorded)",
        arm(|a| a.mean_wall_ms / 1000.0),
    )
}

/// Places the scatter's class labels right of their points, moving a label down a line
/// while it would overlap one already placed (two classes often share a point).
struct Labels {
    /// Data units per pixel on each axis.
    ux: f64,
    uy: f64,
    /// Placed labels as pixel boxes: x0, x1, y centre.
    placed: Vec<(f64, f64, f64)>,
}

impl Labels {
    const LINE_PX: f64 = 17.0;
    const CHAR_PX: f64 = 7.5;

    fn new(x_max: f64, (w, h): (u32, u32)) -> Labels {
        Labels {
            ux: x_max / f64::from(w.max(1)),
            uy: 200.0 / f64::from(h.max(1)),
            placed: Vec::new(),
        }
    }

    /// Where the label of the point (x, y) goes, in data units.
    fn place(&mut self, x: f64, y: f64, text: &str) -> (f64, f64) {
        let x0 = x / self.ux + 10.0;
        let x1 = x0 + text.chars().count() as f64 * Self::CHAR_PX;
        let mut cy = y / self.uy;
        while self
            .placed
            .iter()
            .any(|&(a, b, c)| a < x1 && x0 < b && (c - cy).abs() < Self::LINE_PX)
        {
            cy -= Self::LINE_PX;
        }
        self.placed.push((x0, x1, cy));
        (x0 * self.ux, cy * self.uy)
    }
}

/// Each class's cost (x) against its contribution (y), with the interval as a whisker.
///
/// # Errors
///
/// [`ReportError::Chart`] when the chart cannot be drawn.
pub fn cost(doc: &ResultsDoc) -> Result<String, ReportError> {
    let e = |e| chart_error("cost", e);
    let (desc, xs) = cost_axis(doc);
    let max = xs.iter().copied().fold(0.0, f64::max);
    let x_max = if max > 0.0 { max * 1.25 } else { 1.0 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, 420)).into_drawing_area();
        let mut chart = ChartBuilder::on(&root)
            .margin(16)
            .margin_right(32)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..x_max, -100f64..100f64)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_labels(6)
            .y_labels(5)
            .y_label_formatter(&|v| super::model::points(v / 100.0))
            .x_desc(desc)
            .y_desc("contribution, points")
            .axis_style(INK)
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .label_style(text_style(16))
            .axis_desc_style(text_style(16))
            .draw()
            .map_err(e)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(0.0, 0.0), (x_max, 0.0)],
                INK.stroke_width(1),
            )))
            .map_err(e)?;
        let cap = x_max * 0.006;
        let mut labels = Labels::new(x_max, chart.plotting_area().dim_in_pixel());
        for (c, &x) in doc.classes.iter().zip(&xs) {
            let Some(k) = &c.contribution else { continue };
            let (lo, hi, y) = (k.low * 100.0, k.high * 100.0, k.estimate * 100.0);
            let style = INVESTIGATOR.stroke_width(2);
            chart
                .draw_series([
                    PathElement::new(vec![(x, lo), (x, hi)], style),
                    PathElement::new(vec![(x - cap, lo), (x + cap, lo)], style),
                    PathElement::new(vec![(x - cap, hi), (x + cap, hi)], style),
                ])
                .map_err(e)?;
            let marker = if k.significant {
                Circle::new((x, y), 6, INVESTIGATOR.filled())
            } else {
                Circle::new((x, y), 6, INVESTIGATOR.stroke_width(2))
            };
            chart.draw_series(std::iter::once(marker)).map_err(e)?;
            let (lx, ly) = labels.place(x, y, &c.class);
            chart
                .draw_series(std::iter::once(Text::new(
                    c.class.clone(),
                    (lx, ly),
                    text_style(15).pos(Pos::new(HPos::Left, VPos::Center)),
                )))
                .map_err(e)?;
        }
        root.present().map_err(e)?;
    }
    Ok(svg)
}
