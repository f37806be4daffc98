package io.lingua.api;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.*;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.web.servlet.AutoConfigureMockMvc;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.web.servlet.MockMvc;

@SpringBootTest
@AutoConfigureMockMvc
class TranslationControllerTest {
    @Autowired MockMvc mvc;

    @Test
    void translatesShortText() throws Exception {
        mvc.perform(post("/v1/translations").header("X-Api-Key", "k_test")
                        .contentType("application/json")
                        .content("{\"text\":\"Hallo Welt\",\"targetLang\":\"en\"}"))
                .andExpect(status().isOk())
                .andExpect(jsonPath("$.charactersBilled").value(10));
    }

    @Test
    void rejectsOverlongText() throws Exception {
        String text = "a".repeat(50_001);
        mvc.perform(post("/v1/translations").header("X-Api-Key", "k_test")
                        .contentType("application/json")
                        .content("{\"text\":\"" + text + "\",\"targetLang\":\"en\"}"))
                .andExpect(status().isPayloadTooLarge());
    }
}
