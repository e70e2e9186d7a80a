/** Calls to the HTTP API from these pages: JSON through the shared helper, uploads with progress. */
import { Http } from "../shared/http";

export interface ApiAnswer<T> {
  status: number;
  body: T | null;
}

export async function getJson<T>(url: string): Promise<ApiAnswer<T>> {
  const r = await new Http("", "").request<T>("GET", url);
  return { status: r.status, body: r.data };
}

export async function postJson<T>(url: string, csrf: string, payload: unknown): Promise<ApiAnswer<T>> {
  const r = await new Http("", csrf).request<T>("POST", url, payload);
  return { status: r.status, body: r.data };
}

/** A multipart upload with upload progress (fetch has none): resolves with the JSON answer. */
export function upload<T>(
  url: string,
  csrf: string,
  form: FormData,
  onProgress: (fraction: number) => void,
): Promise<ApiAnswer<T>> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url);
    xhr.setRequestHeader("X-CSRFToken", csrf);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    });
    xhr.addEventListener("load", () => {
      let body: T | null = null;
      try {
        body = JSON.parse(xhr.responseText) as T;
      } catch {
        body = null;
      }
      resolve({ status: xhr.status, body });
    });
    xhr.addEventListener("error", () => reject(new Error("The upload failed: the server could not be reached.")));
    xhr.send(form);
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => window.setTimeout(resolve, ms));
}

export function formatBytes(n: number): string {
  const units = ["bytes", "KB", "MB", "GB"];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${n} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}
