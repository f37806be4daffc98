package com.tablely.privacy;

import static org.assertj.core.api.Assertions.assertThat;

import com.tablely.reservations.ReservationExports;
import com.tablely.reservations.GuestErasure;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/** The guest's personal data in a reservation must not leave us in clear and must be erasable. */
@SpringBootTest
class GuestDataPrivacyTest {
    @Autowired ReservationExports exports;
    @Autowired GuestErasure erasure;
    @Autowired TestReservations fixtures;

    @Test
    void partnerExportMasksTheGuestsPersonalData() {
        String id = fixtures.booked("Ada Lovelace", "+447700900123");
        Map<String, Object> row = exports.partnerRow(id);
        assertThat(row.get("contactPhone")).isEqualTo("***********23");
        assertThat(row.get("guestName")).isEqualTo("**********ce");
        assertThat(row.get("partySize")).isEqualTo(4);
    }

    @Test
    void erasureRequestWipesEverythingThatIdentifiesTheGuest() {
        String id = fixtures.booked("Ada Lovelace", "+447700900123");
        erasure.eraseGuest(id);
        var stored = fixtures.load(id);
        assertThat(stored.contactPhone()).isNull();
        assertThat(stored.guestName()).isNull();
        assertThat(stored.partySize()).isEqualTo(4);
    }

    @Test
    void restaurantSupportNumberIsPublic() {
        assertThat(exports.restaurantRow("r_1").get("supportPhone")).isEqualTo("+442079460000");
    }
}
