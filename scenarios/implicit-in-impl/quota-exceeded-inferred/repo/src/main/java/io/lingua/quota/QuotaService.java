package io.lingua.quota;

import java.time.YearMonth;
import org.springframework.stereotype.Service;

@Service
public class QuotaService {
    private final PlanRepository plans;
    private final UsageRepository usage;

    public QuotaService(PlanRepository plans, UsageRepository usage) {
        this.plans = plans;
        this.usage = usage;
    }

    /**
     * Reserves {@code characters} of the account's allowance for the current
     * billing period. The allowance is only restored when the period rolls over
     * or the account upgrades its plan, so a refused request keeps being refused.
     */
    public void reserve(String accountId, long characters) {
        Plan plan = plans.forAccount(accountId);
        YearMonth period = plan.currentPeriod();
        long used = usage.charactersUsed(accountId, period);
        if (used + characters > plan.monthlyCharacters()) {
            throw new QuotaExceededException(accountId, plan.name(), period);
        }
        usage.add(accountId, period, characters);
    }

    public static final class QuotaExceededException extends RuntimeException {
        public QuotaExceededException(String accountId, String plan, YearMonth period) {
            super("monthly allowance of plan " + plan + " used up for " + period);
        }
    }
}
