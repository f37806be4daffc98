package com.tablely.reservations;

import com.google.i18n.phonenumbers.NumberParseException;
import com.google.i18n.phonenumbers.PhoneNumberUtil;
import java.time.OffsetDateTime;
import org.springframework.stereotype.Service;

@Service
public class ReservationService {
    private final ReservationRepository reservations;
    private final TablePlanner planner;
    private final PhoneNumberUtil phones = PhoneNumberUtil.getInstance();

    public ReservationService(ReservationRepository reservations, TablePlanner planner) {
        this.reservations = reservations;
        this.planner = planner;
    }

    public Reservation book(String restaurantId, int partySize, OffsetDateTime at, String guestName,
                            String contactPhone, String specialRequests) {
        String e164;
        try {
            var parsed = phones.parse(contactPhone, "GB");
            e164 = phones.format(parsed, PhoneNumberUtil.PhoneNumberFormat.E164);
        } catch (NumberParseException e) {
            throw new ReservationException("INVALID_PHONE", 400);
        }
        if (!planner.isOpen(restaurantId, at)) {
            throw new ReservationException("RESTAURANT_CLOSED", 422);
        }
        var table = planner.findTable(restaurantId, partySize, at)
                .orElseThrow(() -> new ReservationException("NO_TABLE_AVAILABLE", 409));
        return reservations.save(new Reservation(null, restaurantId, table.id(), partySize, at,
                guestName, e164, specialRequests, ReservationStatus.CONFIRMED));
    }
}
