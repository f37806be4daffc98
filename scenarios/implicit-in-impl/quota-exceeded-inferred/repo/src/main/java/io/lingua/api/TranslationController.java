package io.lingua.api;

import io.lingua.quota.QuotaService;
import io.lingua.ratelimit.RateLimiter;
import org.springframework.web.bind.annotation.*;

@RestController
@RequestMapping("/v1/translations")
public class TranslationController {
    static final int MAX_TEXT_LENGTH = 50_000;

    private final RateLimiter limiter;
    private final QuotaService quota;
    private final Translator translator;

    public TranslationController(RateLimiter limiter, QuotaService quota, Translator translator) {
        this.limiter = limiter;
        this.quota = quota;
        this.translator = translator;
    }

    public record TranslateRequest(String text, String sourceLang, String targetLang, String glossaryId) {}

    public record TranslateResponse(String translatedText, String detectedSourceLang, long charactersBilled) {}

    @PostMapping
    public TranslateResponse translate(@RequestHeader("X-Api-Key") String apiKey,
                                       @RequestAttribute("accountId") String accountId,
                                       @RequestBody TranslateRequest req) {
        limiter.acquire(apiKey);
        if (req.text().length() > MAX_TEXT_LENGTH) {
            throw new TextTooLongException(req.text().length());
        }
        quota.reserve(accountId, req.text().length());
        Translation t = translator.translate(req.text(), req.sourceLang(), req.targetLang(), req.glossaryId());
        return new TranslateResponse(t.text(), t.sourceLang(), req.text().length());
    }
}
