package io.bazaar.listings;

import static org.junit.jupiter.api.Assertions.*;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.bazaar.listings.config.FeatureFlags;
import io.bazaar.listings.search.ListingIndexer;

class ListingControllerTest {
    private final Map<String, Listing> rows = new HashMap<>();
    private final ListingController controller = new ListingController(
            new ListingRepository() {
                public Optional<Listing> find(String id) { return Optional.ofNullable(rows.get(id)); }
                public void save(Listing l) { rows.put(l.getId(), l); }
            },
            new ListingIndexer((index, id, doc, refresh) -> {}, new FeatureFlags(Map.of())));

    @Test
    void patchKeepsOmittedAttributes() {
        rows.put("l1", new Listing("l1", "s1", "Oak table", 12000));
        controller.update("s1", "l1", Map.of("flag", "b7"));
        assertEquals("Oak table", rows.get("l1").getTitle());
        assertEquals("b7", rows.get("l1").getFlag());
        assertEquals(1, rows.get("l1").getVersion());
    }

    @Test
    void lockedListingIsNotChanged() {
        Listing l = new Listing("l2", "s1", "Lamp", 3000);
        l.setUnderReview(true);
        rows.put("l2", l);
        assertEquals(423, controller.update("s1", "l2", Map.of("price", 2500)).getStatusCode().value());
        assertEquals(3000, rows.get("l2").getPrice());
    }
}
