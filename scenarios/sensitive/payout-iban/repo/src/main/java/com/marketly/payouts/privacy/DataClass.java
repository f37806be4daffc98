package com.marketly.payouts.privacy;

import java.lang.annotation.*;

/** Declares how a stored attribute must be handled. Read by LogMasker and the GDPR export. */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface DataClass {
    Category value();

    enum Category {
        /** Safe to log and export. */
        NONE,
        /** Identifies a person: masked in logs, included in subject-access exports. */
        PERSONAL,
        /** Credentials and keys: never logged, never exported. */
        SECRET,
        /** Bank and card data: tokenised in the vault, masked in logs, audited on access. */
        FINANCIAL
    }
}
