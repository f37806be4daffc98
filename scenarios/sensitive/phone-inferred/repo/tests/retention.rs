use dispatch::delivery::{CreateDelivery, Delivery};
use dispatch::redact::for_log;
use dispatch::retention::scrub_personal_data;
use time::{Duration, OffsetDateTime};

fn delivery(days_ago: i64) -> Delivery {
    Delivery {
        id: "dl_1".into(),
        request: CreateDelivery {
            depot_id: "dep_ber_1".into(),
            recipient_name: "Jonas Weber".into(),
            drop_off_address: "Torstr. 12, 10119 Berlin".into(),
            contact_phone: Some("+4915112345678".into()),
            parcels: 2,
        },
        delivered_at: Some(OffsetDateTime::now_utc() - Duration::days(days_ago)),
        phone_verified: true,
    }
}

#[test]
fn phone_is_erased_after_thirty_days() {
    let mut ds = vec![delivery(31), delivery(3)];
    assert_eq!(scrub_personal_data(&mut ds, OffsetDateTime::now_utc()), 1);
    assert_eq!(ds[0].request.contact_phone, None);
    assert_eq!(ds[1].request.contact_phone.as_deref(), Some("+4915112345678"));
}

#[test]
fn phone_never_reaches_the_log() {
    let logged = for_log(&delivery(0).request);
    assert_eq!(logged["contact_phone"], "[personal data]");
    assert_eq!(logged["parcels"], 2);
}
