package io.bazaar.listings;

public class Listing {
    private final String id;
    private final String sellerId;
    private String title;
    private long price;
    private String flag;
    private boolean underReview;
    private long version;

    public Listing(String id, String sellerId, String title, long price) {
        this.id = id;
        this.sellerId = sellerId;
        this.title = title;
        this.price = price;
    }

    public String getId() { return id; }
    public String getSellerId() { return sellerId; }
    public String getTitle() { return title; }
    public void setTitle(String title) { this.title = title; }
    public long getPrice() { return price; }
    public void setPrice(long price) { this.price = price; }
    public String getFlag() { return flag; }
    public void setFlag(String flag) { this.flag = flag; }
    public boolean isUnderReview() { return underReview; }
    public void setUnderReview(boolean underReview) { this.underReview = underReview; }
    public long getVersion() { return version; }
    public void bumpVersion() { version++; }
}
