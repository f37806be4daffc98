package com.tablely.restaurants;

/**
 * Public profile of a partner restaurant, shown on the booking page.
 * {@code supportPhone} is the restaurant's front-desk number.
 */
public record RestaurantProfile(String id, String name, String address, String supportPhone, String openingHours) {}
