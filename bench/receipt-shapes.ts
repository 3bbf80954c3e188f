/**
 * Distinct delivery receipts in the shapes gateways send (docs/callbacks.md, What is
 * understood): the documented JSON, numbers for ids and 1 for success with no UTC offset,
 * form-encoded, a failure labelled text/plain, Viber replies, and an async request's REJECTED
 * carrying only `request_id`. Each one's record key (its id, or request_id) is unique.
 */
import type { HttpPost } from './http-load.ts';

/** The receipt number `n` as a POST to `path`, and the key its status event must carry. */
export function receiptPost(path: string, n: number): HttpPost & { readonly key: string } {
  const minute = String(n % 60).padStart(2, '0');
  const json = 'application/json';
  switch (n % 6) {
    case 0: {
      const body = `{"success":true,"id":"r-${n}","msg_id":"g-${n}","type":"sms","status":"DELIVERED","updated":"2024-05-01T10:${minute}:00Z"}`;
      return { path, contentType: json, body, key: `r-${n}` };
    }
    case 1: {
      const body = `{"success":1,"id":${n},"msg_id":${9_000_000 + n},"type":"viber","status":"READ","updated":"2024-05-01 10:${minute}:00"}`;
      return { path, contentType: json, body, key: String(n) };
    }
    case 2: {
      const body = `success=true&id=f-${n}&msg_id=g-${n}&type=sms&status=DELIVERED&updated=2024-05-01T10%3A${minute}%3A00Z`;
      return { path, contentType: 'application/x-www-form-urlencoded', body, key: `f-${n}` };
    }
    case 3: {
      const body = `{"success":"false","id":"u-${n}","msg_id":"g-${n}","type":"sms","status":"UNDELIVERED","error":"absent subscriber","updated":"2024-05-01T10:${minute}:00+02:00"}`;
      return { path, contentType: 'text/plain', body, key: `u-${n}` };
    }
    case 4: {
      const body = `{"success":true,"id":"v-${n}","msg_id":"g-${n}","type":"viber","status":"READ","updated":"2024-05-01T10:${minute}:00Z","replies":[{"datetime":"2024-05-01 10:${minute}:01","message":"yes ${n}"}]}`;
      return { path, contentType: `${json}; charset=utf-8`, body, key: `v-${n}` };
    }
    default: {
      const body = `{"success":false,"request_id":"q-${n}","status":"REJECTED","error":"insufficient balance"}`;
      return { path, contentType: json, body, key: `q-${n}` };
    }
  }
}
