use mailroom::upload::{check_attachment, Rejection, UploadConfig};
use mailroom::MailboxLimits;

fn limits(attachment_size_limit: u32) -> MailboxLimits {
    MailboxLimits {
        mailbox_id: "mbx_test".into(),
        attachment_size_limit,
        max_recipients: 10,
        retention_days: 30,
    }
}

#[test]
fn setting_of_512_admits_half_a_mebibyte() {
    let l = limits(512);
    assert_eq!(l.attachment_limit_bytes(), 524_288);
    assert!(check_attachment(&UploadConfig::default(), &l, 524_288).is_ok());
    assert_eq!(
        check_attachment(&UploadConfig::default(), &l, 524_289),
        Err(Rejection::AttachmentTooLarge { limit_bytes: 524_288 })
    );
}

#[test]
fn ceiling_rejects_more_than_fifty_mebibytes() {
    assert!(limits(51_200).validate().is_ok());
    assert!(limits(51_201).validate().is_err());
}

#[test]
fn request_cap_wins_over_mailbox_setting() {
    let cfg = UploadConfig { max_body_size: 1000 };
    assert_eq!(check_attachment(&cfg, &limits(4096), 1001), Err(Rejection::BodyTooLarge));
}
