//! Nightly retention job.
//!
//! Recipient contact details are personal data kept only as long as the delivery needs
//! them: 30 days after delivery they are erased; the rest of the record is kept for
//! accounting.

use time::{Duration, OffsetDateTime};

use crate::delivery::Delivery;

pub const PERSONAL_DATA_RETENTION: Duration = Duration::days(30);

/// Erases the recipient's personal data from deliveries older than the retention period.
/// Returns how many deliveries were scrubbed.
pub fn scrub_personal_data(deliveries: &mut [Delivery], now: OffsetDateTime) -> usize {
    let mut scrubbed = 0;
    for d in deliveries.iter_mut() {
        let Some(at) = d.delivered_at else { continue };
        if now - at < PERSONAL_DATA_RETENTION || d.request.contact_phone.is_none() && d.request.recipient_name.is_empty() {
            continue;
        }
        d.request.recipient_name.clear();
        d.request.drop_off_address.clear();
        d.request.contact_phone = None;
        d.phone_verified = false;
        scrubbed += 1;
    }
    scrubbed
}
