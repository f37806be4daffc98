package com.northwind.wallet;

public class WalletException extends RuntimeException {
    private final String code;
    private final int status;

    public WalletException(String code, int status, Throwable cause) {
        super(code, cause);
        this.code = code;
        this.status = status;
    }

    public String code() {
        return code;
    }

    public int status() {
        return status;
    }
}
