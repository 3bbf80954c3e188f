/**
 * The gateway's limits as constants (spec: Limits). Units are in the names (`_S` = seconds).
 * Where the spec says "not shown" (viber_lifetime bounds, rate limits, operations per
 * request, message length) there is deliberately no constant.
 */

/** `sms_lifetime` minimum: 1 hour (spec: Limits). */
export const SMS_LIFETIME_MIN_S = 3600;
/** `sms_lifetime` maximum: 3 days (spec: Limits). */
export const SMS_LIFETIME_MAX_S = 259_200;
/** `sms_lifetime` when absent: 2 days (spec: Limits). */
export const SMS_LIFETIME_DEFAULT_S = 172_800;

/** `rcs_lifetime` minimum; no maximum is stated (spec: Limits). */
export const RCS_LIFETIME_MIN_S = 60;
/** `rcs_lifetime` when absent (spec: Limits). */
export const RCS_LIFETIME_DEFAULT_S = 172_800;

/** `telegram_lifetime` minimum; no maximum is stated (spec: Limits). */
export const TELEGRAM_LIFETIME_MIN_S = 60;
/** `telegram_lifetime` when absent (spec: Limits). */
export const TELEGRAM_LIFETIME_DEFAULT_S = 172_800;

/** `telegram` operation `message`: the password has 4 to 8 digits (spec: telegram, Limits). */
export const TELEGRAM_OTP_MIN_DIGITS = 4;
/** See {@link TELEGRAM_OTP_MIN_DIGITS}. */
export const TELEGRAM_OTP_MAX_DIGITS = 8;

/** The envelope's `data` array has at least 1 item (spec: Request envelope, Limits). */
export const ENVELOPE_MIN_OPERATIONS = 1;

/**
 * `phone` digits at most. The spec says only "international format, digits only, no +";
 * 15 is the E.164 maximum that international format implies. It also keeps every
 * valid phone a safe JSON integer.
 */
export const PHONE_MAX_DIGITS = 15;
/** The largest number that has {@link PHONE_MAX_DIGITS} digits. */
export const PHONE_MAX_VALUE = 999_999_999_999_999;
