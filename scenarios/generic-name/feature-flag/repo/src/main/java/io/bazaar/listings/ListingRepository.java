package io.bazaar.listings;

import java.util.Optional;

public interface ListingRepository {
    Optional<Listing> find(String id);

    void save(Listing listing);
}
