package com.tablely.privacy;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** Masks the configured fields of a flat record; which fields is configuration, not code. */
public class FieldMasker {
    private final Set<String> masked;

    public FieldMasker(Set<String> masked) {
        this.masked = masked;
    }

    public Map<String, Object> apply(Map<String, Object> record) {
        Map<String, Object> out = new LinkedHashMap<>(record);
        for (String key : masked) {
            out.computeIfPresent(key, (k, v) -> mask(String.valueOf(v)));
        }
        return out;
    }

    static String mask(String value) {
        if (value.length() <= 2) {
            return "**";
        }
        return "*".repeat(value.length() - 2) + value.substring(value.length() - 2);
    }
}
