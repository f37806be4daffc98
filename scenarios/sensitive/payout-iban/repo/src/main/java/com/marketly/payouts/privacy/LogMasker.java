package com.marketly.payouts.privacy;

import java.lang.reflect.Field;
import java.util.LinkedHashMap;
import java.util.Map;

/** Renders an entity for logs, masking every attribute that is not DataClass NONE. */
public final class LogMasker {
    private LogMasker() {}

    public static Map<String, Object> render(Object entity) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (Field f : entity.getClass().getDeclaredFields()) {
            DataClass dc = f.getAnnotation(DataClass.class);
            f.setAccessible(true);
            try {
                Object value = f.get(entity);
                boolean clear = dc != null && dc.value() == DataClass.Category.NONE;
                out.put(f.getName(), clear ? value : "<" + (dc == null ? "UNCLASSIFIED" : dc.value()) + ">");
            } catch (IllegalAccessException e) {
                out.put(f.getName(), "<unreadable>");
            }
        }
        return out;
    }
}
