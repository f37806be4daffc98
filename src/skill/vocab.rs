//! Closed value vocabularies. A value outside them fails `value_in_vocabulary`.

/// Units: time, information, money (currency comes from elsewhere), ratio, length, count.
pub const UNITS: &[&str] = &[
    "ns",
    "us",
    "ms",
    "s",
    "min",
    "h",
    "d", // time
    "bit",
    "B",
    "kB",
    "MB",
    "GB",
    "KiB",
    "MiB",
    "GiB", // information
    "minor_unit",
    "major_unit", // money
    "percent",
    "basis_point",
    "ratio", // ratio
    "mm",
    "m",
    "km", // length
    "count",
];

/// Sensitivity classes.
pub const SENSITIVITY: &[&str] = &["none", "pii", "secret", "financial"];
