package io.bazaar.listings.moderation;

/** Why a buyer flagged a listing through POST /listings/{id}/reports. */
public enum ReportFlag {
    SPAM,
    ABUSE,
    COUNTERFEIT;

    /** Three open flags of any kind put a listing under review. */
    public static final int REVIEW_THRESHOLD = 3;
}
