package io.bazaar.listings;

import java.util.Map;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.*;

import io.bazaar.listings.search.ListingIndexer;

@RestController
@RequestMapping("/listings")
public class ListingController {
    private final ListingRepository repository;
    private final ListingIndexer indexer;

    public ListingController(ListingRepository repository, ListingIndexer indexer) {
        this.repository = repository;
        this.indexer = indexer;
    }

    @PatchMapping("/{listingId}")
    public ResponseEntity<?> update(@RequestHeader("X-Seller") String sellerId,
                                    @PathVariable String listingId,
                                    @RequestBody Map<String, Object> body) {
        Listing listing = repository.find(listingId)
                .filter(l -> l.getSellerId().equals(sellerId))
                .orElse(null);
        if (listing == null) {
            return error(404, "LISTING_NOT_FOUND", "No listing with this id for this seller.");
        }
        if (listing.isUnderReview()) {
            return error(423, "LISTING_LOCKED", "The listing is under moderation review and cannot be edited.");
        }
        if (body.containsKey("price")) {
            long price = ((Number) body.get("price")).longValue();
            if (price <= 0) {
                return error(422, "INVALID_PRICE", "The price must be positive.");
            }
            listing.setPrice(price);
        }
        if (body.containsKey("title")) {
            listing.setTitle((String) body.get("title"));
        }
        if (body.containsKey("flag")) {
            listing.setFlag((String) body.get("flag"));
        }
        listing.bumpVersion();
        repository.save(listing);
        indexer.reindex(listing);
        return ResponseEntity.ok(Map.of("version", listing.getVersion()));
    }

    private static ResponseEntity<?> error(int status, String code, String message) {
        return ResponseEntity.status(status).body(Map.of("code", code, "message", message));
    }
}
