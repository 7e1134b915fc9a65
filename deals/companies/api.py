"""REST views of companies and contacts: validate → call a service or selector → serialize. Tenancy as
for deals: another account's company or contact is a 404 exactly like a missing one. Companies and
contacts are part of the account's deal records: they are read with deals:read and written with
deals:write (docs/companies.md says why)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from deals.companies import selectors, services
from deals.companies.models import Company, Contact
from deals.companies.serializers import (
    CompanyInputSerializer,
    CompanyListQuerySerializer,
    CompanySerializer,
    ContactInputSerializer,
    ContactListQuerySerializer,
    ContactSerializer,
)
from lev.accounts.api import AccountScopedView, validated
from lev.accounts.scopes import DEALS_READ, DEALS_WRITE
from lev.idempotency.services import idempotent
from lev.openapi import IDEMPOTENCY_KEY, READ_ERRORS, WRITE_ERRORS
from lev.pagination import StandardPagination, paginated


class CompanyScopedView(AccountScopedView):
    def company(self, request: Request, company_id: int) -> Company:
        return selectors.company_get(account=self.account(request), company_id=company_id)

    def contact(self, request: Request, contact_id: int) -> Contact:
        return selectors.contact_get(account=self.account(request), contact_id=contact_id)

    def contacts_page(self, request: Request, where: Callable[[], dict[str, Any]]) -> Response:
        """A page of contacts; the query is checked before `where` looks up their company or lender, so a
        bad page is refused by name whichever company or lender it names."""
        query = validated(ContactListQuerySerializer, request.query_params.dict())
        contacts = selectors.contact_list(account=self.account(request), search=query.get("search"), **where())
        paginator = StandardPagination()
        page = paginator.paginate_queryset(contacts, request, view=self)
        return paginator.get_paginated_response(ContactSerializer(page, many=True).data)


class CompanyListCreateApi(CompanyScopedView):
    required_scopes = {"GET": DEALS_READ, "POST": DEALS_WRITE}

    @extend_schema(operation_id="companies_list", parameters=[CompanyListQuerySerializer],
                   responses={200: paginated(CompanySerializer, "PaginatedCompanyList"), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        """The account's companies (sponsors, borrowers, brokers, others) by name; filter by kind or
        words in the name."""
        query = CompanyListQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        companies = selectors.company_list(account=self.account(request), filters=query.to_filters())
        paginator = StandardPagination()
        page = paginator.paginate_queryset(companies, request, view=self)
        return paginator.get_paginated_response(CompanySerializer(page, many=True).data)

    @extend_schema(request=CompanyInputSerializer, parameters=[IDEMPOTENCY_KEY],
                   responses={201: CompanySerializer, **WRITE_ERRORS})
    def post(self, request: Request) -> Response:
        def create() -> Response:
            data = validated(CompanyInputSerializer, request.data)
            company = services.company_create(account=self.account(request), data=data)
            return Response(CompanySerializer(company).data, status=status.HTTP_201_CREATED)

        return idempotent(request, create)


class CompanyDetailApi(CompanyScopedView):
    required_scopes = {"GET": DEALS_READ, "PATCH": DEALS_WRITE}

    @extend_schema(responses={200: CompanySerializer, **READ_ERRORS})
    def get(self, request: Request, company_id: int) -> Response:
        return Response(CompanySerializer(self.company(request, company_id)).data)

    @extend_schema(request=CompanyInputSerializer, responses={200: CompanySerializer, **WRITE_ERRORS})
    def patch(self, request: Request, company_id: int) -> Response:
        company = self.company(request, company_id)
        data = validated(CompanyInputSerializer, request.data, partial=True)
        return Response(CompanySerializer(services.company_update(company=company, data=data)).data)


class CompanyContactListCreateApi(CompanyScopedView):
    required_scopes = {"GET": DEALS_READ, "POST": DEALS_WRITE}

    @extend_schema(operation_id="companies_contacts_list", parameters=[ContactListQuerySerializer],
                   responses={200: paginated(ContactSerializer, "PaginatedContactList"), **READ_ERRORS})
    def get(self, request: Request, company_id: int) -> Response:
        """The people at one of the account's companies, by name."""
        return self.contacts_page(request, lambda: {"company": self.company(request, company_id)})

    @extend_schema(request=ContactInputSerializer, parameters=[IDEMPOTENCY_KEY],
                   responses={201: ContactSerializer, **WRITE_ERRORS})
    def post(self, request: Request, company_id: int) -> Response:
        def create() -> Response:
            company = self.company(request, company_id)
            data = validated(ContactInputSerializer, request.data)
            contact = services.contact_create(account=self.account(request), company=company, data=data)
            return Response(ContactSerializer(contact).data, status=status.HTTP_201_CREATED)

        return idempotent(request, create)


class LenderContactListCreateApi(CompanyScopedView):
    required_scopes = {"GET": DEALS_READ, "POST": DEALS_WRITE}

    @extend_schema(operation_id="lenders_contacts_list", parameters=[ContactListQuerySerializer],
                   responses={200: paginated(ContactSerializer, "PaginatedLenderContactList"), **READ_ERRORS})
    def get(self, request: Request, lender_id: int) -> Response:
        """The account's own contacts at a directory lender, by name (other accounts' are never shown)."""
        return self.contacts_page(request, lambda: {
            "lender_id": services.lender_for_contacts(lender_id, account=self.account(request)).pk})

    @extend_schema(request=ContactInputSerializer, parameters=[IDEMPOTENCY_KEY],
                   responses={201: ContactSerializer, **WRITE_ERRORS})
    def post(self, request: Request, lender_id: int) -> Response:
        """Add a person at a directory lender to the account's contacts (only this account sees them);
        a placement with that lender can be sent to them."""
        def create() -> Response:
            lender = services.lender_for_contacts(lender_id, account=self.account(request))
            data = validated(ContactInputSerializer, request.data)
            contact = services.contact_create(account=self.account(request), lender=lender, data=data)
            return Response(ContactSerializer(contact).data, status=status.HTTP_201_CREATED)

        return idempotent(request, create)


class ContactDetailApi(CompanyScopedView):
    required_scopes = {"GET": DEALS_READ, "PATCH": DEALS_WRITE}

    @extend_schema(responses={200: ContactSerializer, **READ_ERRORS})
    def get(self, request: Request, contact_id: int) -> Response:
        return Response(ContactSerializer(self.contact(request, contact_id)).data)

    @extend_schema(request=ContactInputSerializer, responses={200: ContactSerializer, **WRITE_ERRORS})
    def patch(self, request: Request, contact_id: int) -> Response:
        contact = self.contact(request, contact_id)
        data = validated(ContactInputSerializer, request.data, partial=True)
        return Response(ContactSerializer(services.contact_update(contact=contact, data=data)).data)
