package com.ledgerly.billing.service;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.Mockito.*;

import com.ledgerly.billing.error.BillingException;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class InvoicePaymentServiceTest {
    private final InvoiceRepository invoices = mock(InvoiceRepository.class);
    private final CardGateway gateway = mock(CardGateway.class);
    private final InvoicePaymentService service = new InvoicePaymentService(invoices, gateway);

    @Test
    void payingAPaidInvoiceFails() {
        when(invoices.find("inv_1")).thenReturn(Optional.of(Invoices.paid("inv_1", 3)));
        assertThatThrownBy(() -> service.pay("inv_1", "pm_1", 3))
                .isInstanceOf(BillingException.class)
                .hasMessageContaining("settled");
        verifyNoInteractions(gateway);
    }

    @Test
    void staleVersionIsRejected() {
        when(invoices.find("inv_2")).thenReturn(Optional.of(Invoices.open("inv_2", 5)));
        assertThatThrownBy(() -> service.pay("inv_2", "pm_1", 4)).isInstanceOf(BillingException.class);
    }
}
