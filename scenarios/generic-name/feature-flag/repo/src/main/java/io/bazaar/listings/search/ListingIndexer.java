package io.bazaar.listings.search;

import java.util.Map;

import io.bazaar.listings.Listing;
import io.bazaar.listings.config.FeatureFlags;

public class ListingIndexer {
    private final SearchClient client;
    private final FeatureFlags flags;

    public ListingIndexer(SearchClient client, FeatureFlags flags) {
        this.client = client;
        this.flags = flags;
    }

    public void reindex(Listing listing) {
        Map<String, Object> doc = Map.of(
                "id", listing.getId(),
                "title", listing.getTitle(),
                "price", listing.getPrice());
        client.upsert("listings", listing.getId(), doc, flags.instantReindex());
    }

    public interface SearchClient {
        void upsert(String index, String id, Map<String, Object> doc, boolean refresh);
    }
}
