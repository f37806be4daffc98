use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

pub const MAX_PARCELS_PER_STOP: u32 = 5;

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct CreateDelivery {
    pub depot_id: String,
    pub recipient_name: String,
    pub drop_off_address: String,
    pub contact_phone: Option<String>,
    pub parcels: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct Depot {
    pub id: String,
    pub name: String,
    /// Public hotline, printed on labels.
    pub depot_phone: String,
}

#[derive(Debug, Clone)]
pub struct Delivery {
    pub id: String,
    pub request: CreateDelivery,
    pub delivered_at: Option<OffsetDateTime>,
    /// Set once the courier app confirmed the number by SMS.
    pub phone_verified: bool,
}

#[derive(Debug, PartialEq)]
pub enum BookingError {
    UnknownDepot,
    OutsideServiceArea,
    TooManyParcels,
    NoRoundAvailable,
}

pub fn validate(req: &CreateDelivery, depots: &[Depot]) -> Result<(), BookingError> {
    if !depots.iter().any(|d| d.id == req.depot_id) {
        return Err(BookingError::UnknownDepot);
    }
    if req.parcels == 0 || req.parcels > MAX_PARCELS_PER_STOP {
        return Err(BookingError::TooManyParcels);
    }
    Ok(())
}
