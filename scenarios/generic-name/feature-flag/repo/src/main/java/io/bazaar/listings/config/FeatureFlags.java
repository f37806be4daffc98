package io.bazaar.listings.config;

import java.util.Map;

/** Release toggles read from the environment at start-up (LISTINGS_FLAG_<NAME>=on|off). */
public final class FeatureFlags {
    private final Map<String, String> env;

    public FeatureFlags(Map<String, String> env) {
        this.env = env;
    }

    public boolean flag(String name) {
        String key = "LISTINGS_FLAG_" + name.toUpperCase().replace('-', '_');
        return "on".equalsIgnoreCase(env.getOrDefault(key, "off"));
    }

    public boolean instantReindex() {
        return flag("instant-reindex");
    }
}
