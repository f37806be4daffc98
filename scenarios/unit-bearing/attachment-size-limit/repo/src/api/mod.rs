pub mod mailbox;
